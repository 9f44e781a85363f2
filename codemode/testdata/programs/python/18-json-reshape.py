# want: {"core":[{"id":1,"name":"Ana","email":"ana@example.com"},{"id":2,"name":"Ben","email":"ben@example.com"}],"web":[{"id":3,"name":"Cleo","email":"cleo@example.com"},{"id":4,"name":"Dev","email":null}]}
import json

users = await fetch_json(url="https://api.example.com/users")
by_team = {}
for u in users:
    by_team.setdefault(u["team"], []).append({"id": u["id"], "name": u["name"], "email": u.get("email")})
text = json.dumps(by_team)
# round-trip to be sure it is plain JSON
print(json.dumps(json.loads(text)))
