# want: shop on :8080, features on: discounts, owners: ana & ben, search timeout: 30s
import json

raw = await read_file(path="config/app.json")
config = json.loads(raw)
name, port = config["name"], config["port"]
features = config.get("features", {})
owners = config.get("owners", [])
enabled = [feature for feature, on in features.items() if on]
timeout = config.get("search", {}).get("timeout_s", 30)
print(f"{name} on :{port}, features on: {', '.join(enabled)}, owners: {' & '.join(owners)}, search timeout: {timeout}s")
