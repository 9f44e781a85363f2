# want: [{"path":"cart/cart.go","size":432},{"path":"store/store.go","size":302},{"path":"api/server.go","size":222}]
import json

files = await list_files(dir=".")
go_files = [f for f in files if f["path"].endswith(".go")]
largest = sorted(go_files, key=lambda f: f["size"], reverse=True)[:3]
print(json.dumps([{"path": f["path"], "size": f["size"]} for f in largest]))
