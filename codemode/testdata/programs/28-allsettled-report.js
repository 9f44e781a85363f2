// want: read 3/5 files (30 non-blank lines); missing: cart/missing.go, docs/README.md
const paths = ["go.mod", "cart/cart.go", "cart/missing.go", "docs/README.md", "store/store.go"];
const settled = await Promise.allSettled(paths.map((path) => tools.read_file({ path })));
const ok = [];
const missing = [];
let lines = 0;
settled.forEach((r, i) => {
  if (r.status === "fulfilled") {
    ok.push(paths[i]);
    lines += r.value.split("\n").filter((l) => l.trim() !== "").length;
  } else if (r.reason?.kind === "not_found") {
    missing.push(paths[i]);
  } else {
    throw r.reason;
  }
});
return `read ${ok.length}/${paths.length} files (${lines} non-blank lines); missing: ${missing.join(", ")}`;
