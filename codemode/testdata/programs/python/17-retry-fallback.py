# want: {"source": "https://mirror2.example.com/rates.json", "attempts": 3, "failures": ["not_found", "not_found"], "usd": "108.00 USD"}
import json

mirrors = [
    "https://api.example.com/rates.json",
    "https://mirror1.example.com/rates.json",
    "https://mirror2.example.com/rates.json",
]
rates = None
source = None
attempts = 0
failures = []
for url in mirrors:
    attempts += 1
    try:
        rates = await fetch_json(url=url)
        source = url
        break
    except ToolError as err:
        failures.append(err.kind)
if rates is None:
    raise RuntimeError("no mirror answered")
usd = f"{100 * rates['rates']['USD']:.2f}"
print(json.dumps({"source": source, "attempts": attempts, "failures": failures, "usd": f"{usd} USD"}))
