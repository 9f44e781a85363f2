# want: {"failed":2,"tests":["cart.TestDiscount","store.TestMissing"]}
import asyncio
import json
import re

packages = ["./cart", "./api", "./store"]
outputs = await asyncio.gather(*[run_tests(package=p) for p in packages])
failures = []
for pkg, out in zip(packages, outputs):
    for m in re.finditer(r"--- FAIL: (\w+) \(([\d.]+)s\)", out):
        failures.append(f"{pkg.replace('./', '')}.{m.group(1)}")
print(json.dumps({"failed": len(failures), "tests": failures}))
