# want: {"fix":[3,5],"build":[4],"write":[6],"done":[1,2]}
import json

issues = []
for i in range(1, 7):
    issues.append(await get_issue(id=i))
buckets = {"fix": [], "build": [], "write": [], "done": []}
for issue in issues:
    if issue["state"] == "closed":
        buckets["done"].append(issue["id"])
        continue
    match issue["labels"][0]:
        case "bug":
            buckets["fix"].append(issue["id"])
        case "feature":
            buckets["build"].append(issue["id"])
        case _:
            buckets["write"].append(issue["id"])
print(json.dumps(buckets))
