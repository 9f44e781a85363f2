// want: {"cart/cart.go":"// Package cart computes what a customer owes.","cart/discount.go":"// Discounts for carts."}
const files = await tools.list_files({ dir: "cart" });
const sources = files.filter((f) => f.path.endsWith(".go") && !f.path.endsWith("_test.go"));
const contents = await Promise.all(sources.map((f) => tools.read_file({ path: f.path })));
const firstLines = {};
sources.forEach((f, i) => {
  firstLines[f.path] = contents[i].split("\n")[0];
});
return firstLines;
