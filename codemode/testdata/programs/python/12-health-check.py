# want: 2 of 4 services need attention: db is degraded (870 ms), search is down
health = await fetch_json(url="https://status.example.com/health")
unhealthy = [s for s in health["services"] if s["status"] != "ok"]
if not unhealthy:
    print("all services ok")
else:
    def describe(s):
        if s["latency_ms"] is None:
            return f"{s['name']} is {s['status']}"
        return f"{s['name']} is {s['status']} ({s['latency_ms']} ms)"

    print(f"{len(unhealthy)} of {len(health['services'])} services need attention: {', '.join(describe(s) for s in unhealthy)}")
