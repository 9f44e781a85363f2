// want: "Found 4 TODOs\ncart: 2 TODOs\n(root): 1 TODO\napi: 1 TODO"
const hits = await tools.search({ query: "TODO" });
const byFile = new Map();
for (const hit of hits) {
  const dir = hit.path.includes("/") ? hit.path.split("/")[0] : "(root)";
  byFile.set(dir, (byFile.get(dir) ?? 0) + 1);
}
const lines = [...byFile.entries()]
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  .map(([dir, n]) => `${dir}: ${n} TODO${n === 1 ? "" : "s"}`);
return `Found ${hits.length} TODOs\n` + lines.join("\n");
