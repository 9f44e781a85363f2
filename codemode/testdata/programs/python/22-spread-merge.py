# want: Ana leads shop; Cleo leads shop-web
import asyncio

users, teams = await asyncio.gather(
    fetch_json(url="https://api.example.com/users"),
    fetch_json(url="https://api.example.com/teams"),
)
merged = [{**u, **teams.get(u["team"], {}), "is_lead": teams.get(u["team"], {}).get("lead") == u["name"]} for u in users]
leads = [f"{u['name']} leads {u['repo']}" for u in merged if u["is_lead"]]
print("; ".join(leads))
