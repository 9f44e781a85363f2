// want: {"core":[{"id":1,"name":"Ana","email":"ana@example.com"},{"id":2,"name":"Ben","email":"ben@example.com"}],"web":[{"id":3,"name":"Cleo","email":"cleo@example.com"},{"id":4,"name":"Dev","email":null}]}
const users = await tools.fetch_json({ url: "https://api.example.com/users" });
const byTeam = {};
for (const { id, name, team, email } of users) {
  if (!byTeam[team]) byTeam[team] = [];
  byTeam[team].push({ id, name, email: email ?? null });
}
const text = JSON.stringify(byTeam);
// round-trip to be sure it is plain JSON
return JSON.stringify(JSON.parse(text));
