// want: shop on :8080, features on: discounts, owners: ana & ben, search timeout: 30s
const raw = await tools.read_file({ path: "config/app.json" });
const config = JSON.parse(raw);
const { name, port, features = {}, owners = [] } = config;
const enabled = Object.entries(features)
  .filter(([, on]) => on)
  .map(([feature]) => feature);
const timeout = config.search?.timeout_s ?? 30;
return `${name} on :${port}, features on: ${enabled.join(", ")}, owners: ${owners.join(" & ")}, search timeout: ${timeout}s`;
