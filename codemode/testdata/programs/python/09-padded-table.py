# want: "store/store.go        302 B\nstore/store_test.go   131 B\ntotal                 433 B"
files = await list_files(dir="store")
width = max(len(f["path"]) for f in files)
rows = [f"{f['path']:<{width}} {f['size']:>5} B" for f in files]
total = sum(f["size"] for f in files)
rows.append(f"{'total':<{width}} {total:>5} B")
print("\n".join(rows))
