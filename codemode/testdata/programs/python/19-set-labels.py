# want: {"labels":["api","bug","cart","docs","feature","store"],"onlyClosed":[]}
import asyncio
import json

issues = await asyncio.gather(*[get_issue(id=i) for i in range(1, 7)])
labels = set()
open_labels = set()
for issue in issues:
    labels.update(issue["labels"])
    if issue["state"] == "open":
        open_labels |= set(issue["labels"])
only_closed = sorted(labels - open_labels)
print(json.dumps({"labels": sorted(labels), "onlyClosed": only_closed}))
