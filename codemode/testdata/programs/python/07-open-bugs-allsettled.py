# want: {"openBugs":["#3 Discount rounds the wrong way","#5 Store forgets missing carts"],"missing":[7]}
import asyncio
import json

ids = [1, 2, 3, 4, 5, 6, 7]
results = await asyncio.gather(*(get_issue(id=i) for i in ids), return_exceptions=True)
open_bugs = []
missing = []
for issue_id, r in zip(ids, results):
    if isinstance(r, Exception):
        missing.append(issue_id)
        continue
    if r["state"] == "open" and "bug" in r["labels"]:
        open_bugs.append(f"#{r['id']} {r['title']}")
print(json.dumps({"openBugs": open_bugs, "missing": missing}))
