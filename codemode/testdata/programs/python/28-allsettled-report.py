# want: read 3/5 files (30 non-blank lines); missing: cart/missing.go, docs/README.md
import asyncio

paths = ["go.mod", "cart/cart.go", "cart/missing.go", "docs/README.md", "store/store.go"]
results = await asyncio.gather(*(read_file(path=p) for p in paths), return_exceptions=True)
ok, missing, lines = [], [], 0
for path, r in zip(paths, results):
    if isinstance(r, ToolError) and r.kind == "not_found":
        missing.append(path)
    elif isinstance(r, Exception):
        raise r
    else:
        ok.append(path)
        lines += len([l for l in r.split("\n") if l.strip()])
print(f"read {len(ok)}/{len(paths)} files ({lines} non-blank lines); missing: {', '.join(missing)}")
