// want: "store/store.go        302 B\nstore/store_test.go   131 B\ntotal                 433 B"
const files = await tools.list_files({ dir: "store" });
const width = Math.max(...files.map((f) => f.path.length));
const rows = files.map((f) => `${f.path.padEnd(width)} ${String(f.size).padStart(5)} B`);
const total = files.reduce((sum, f) => sum + f.size, 0);
rows.push(`${"total".padEnd(width)} ${String(total).padStart(5)} B`);
return rows.join("\n");
