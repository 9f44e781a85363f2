# want: "Found 4 TODOs\ncart: 2 TODOs\n(root): 1 TODO\napi: 1 TODO"
from collections import Counter

hits = await search(query="TODO")
by_dir = Counter(h["path"].split("/")[0] if "/" in h["path"] else "(root)" for h in hits)
lines = [
    f"{d}: {n} TODO{'' if n == 1 else 's'}"
    for d, n in sorted(by_dir.items(), key=lambda kv: (-kv[1], kv[0]))
]
print(f"Found {len(hits)} TODOs\n" + "\n".join(lines))
