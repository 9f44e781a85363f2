# want: {"counts":[{"q":"Total","hits":2,"files":2},{"q":"Discount","hits":4,"files":2},{"q":"Save","hits":2,"files":2},{"q":"Refund","hits":0,"files":0}],"unused":["Refund"]}
import asyncio
import json

queries = ["Total", "Discount", "Save", "Refund"]


async def count(q):
    hits = await search(query=q)
    files = {h["path"] for h in hits}
    return {"q": q, "hits": len(hits), "files": len(files)}


counts = await asyncio.gather(*map(count, queries))
unused = [c["q"] for c in counts if c["hits"] == 0]
print(json.dumps({"counts": counts, "unused": unused}))
