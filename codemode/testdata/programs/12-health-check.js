// want: 2 of 4 services need attention: db is degraded (870 ms), search is down
const health = await tools.fetch_json({ url: "https://status.example.com/health" });
const unhealthy = health.services.filter((s) => s.status !== "ok");
if (unhealthy.length === 0) {
  return "all services ok";
}
const describe = (s) =>
  s.latency_ms === null ? `${s.name} is ${s.status}` : `${s.name} is ${s.status} (${s.latency_ms} ms)`;
return `${unhealthy.length} of ${health.services.length} services need attention: ${unhealthy.map(describe).join(", ")}`;
