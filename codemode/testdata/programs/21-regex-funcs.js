// want: 3 funcs (3 exported): Cart.Add, Cart.Total, Empty
const src = await tools.read_file({ path: "cart/cart.go" });
const funcs = [];
for (const m of src.matchAll(/^func (?:\((\w+) \*?(\w+)\) )?(\w+)\(/gm)) {
  const [, , recv, name] = m;
  funcs.push(recv ? `${recv}.${name}` : name);
}
const exported = funcs.filter((f) => /^[A-Z]/.test(f.split(".").pop()));
return `${funcs.length} funcs (${exported.length} exported): ${funcs.join(", ")}`;
