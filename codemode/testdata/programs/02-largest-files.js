// want: [{"path":"cart/cart.go","size":432},{"path":"store/store.go","size":302},{"path":"api/server.go","size":222}]
const files = await tools.list_files({ dir: "." });
const largest = files
  .filter((f) => f.path.endsWith(".go"))
  .sort((a, b) => b.size - a.size)
  .slice(0, 3)
  .map((f) => ({ path: f.path, size: f.size }));
return largest;
