# want: {"totals":{".":269,"api":477,"cart":701,"config":136,"store":433},"biggest":"cart"}
import json
from functools import reduce

files = await list_files(dir=".")


def add(acc, f):
    key = f["path"].split("/")[0] if "/" in f["path"] else "."
    acc[key] = acc.get(key, 0) + f["size"]
    return acc


totals = reduce(add, files, {})
biggest = max(totals, key=totals.get)
print(json.dumps({"totals": totals, "biggest": biggest}))
