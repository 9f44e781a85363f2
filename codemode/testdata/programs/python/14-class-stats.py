# want: {".":{"files":3,"mean":89.7,"max":134},"api":{"files":3,"mean":159,"max":222},"cart":{"files":3,"mean":233.7,"max":432},"config":{"files":1,"mean":136,"max":136},"store":{"files":2,"mean":216.5,"max":302}}
import json


class Stats:
    def __init__(self):
        self.values = []

    def add(self, v):
        self.values.append(v)
        return self

    @property
    def count(self):
        return len(self.values)

    @property
    def mean(self):
        return sum(self.values) / self.count

    @property
    def max(self):
        return max(self.values)


by_dir = {}
for f in await list_files(dir="."):
    d = f["path"].rsplit("/", 1)[0] if "/" in f["path"] else "."
    by_dir.setdefault(d, Stats()).add(f["size"])
out = {d: {"files": s.count, "mean": round(s.mean, 1), "max": s.max} for d, s in by_dir.items()}
print(json.dumps(out))
