# want: {"pages": 3, "orders": 5, "total": 7544, "largest": "o3"}
import json

url = "https://api.example.com/orders?page=1"
pages = 0
orders = []
while url:
    page = await fetch_json(url=url)
    pages += 1
    orders.extend(page["orders"])
    url = page["next"]
total = sum(o["total"] for o in orders)
largest = max(orders, key=lambda o: o["total"])
print(json.dumps({"pages": pages, "orders": len(orders), "total": total, "largest": largest["id"]}))
