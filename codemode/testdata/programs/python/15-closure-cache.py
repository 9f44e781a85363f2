# want: {"calls": 2, "hits": 3, "packageNames": ["cart", "cart", "store", "cart", "store"]}
import json
import re


def cached(fn):
    cache = {}
    stats = {"calls": 0, "hits": 0}

    async def get(key):
        if key in cache:
            stats["hits"] += 1
            return cache[key]
        stats["calls"] += 1
        value = await fn(key)
        cache[key] = value
        return value

    get.stats = lambda: dict(stats)
    return get


read = cached(lambda path: read_file(path=path))
paths = ["cart/cart.go", "cart/cart.go", "store/store.go", "cart/cart.go", "store/store.go"]
package_names = []
for p in paths:
    src = await read(p)
    package_names.append(re.search(r"^package (\w+)$", src, re.M).group(1))
print(json.dumps({**read.stats(), "packageNames": package_names}))
