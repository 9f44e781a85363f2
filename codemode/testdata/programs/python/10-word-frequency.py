# want: cart=3 api=2 shop=2
import re

text = await read_file(path="README.md")
stop = {"a", "an", "the", "and", "to"}
counts = {}
for word in re.split(r"[^a-z]+", text.lower()):
    if not word or word in stop:
        continue
    counts[word] = counts.get(word, 0) + 1
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
print(" ".join(f"{w}={n}" for w, n in top))
