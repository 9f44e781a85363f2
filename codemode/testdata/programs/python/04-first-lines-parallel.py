# want: {"cart/cart.go":"// Package cart computes what a customer owes.","cart/discount.go":"// Discounts for carts."}
import asyncio
import json

files = await list_files(dir="cart")
sources = [f for f in files if f["path"].endswith(".go") and not f["path"].endswith("_test.go")]
contents = await asyncio.gather(*(read_file(path=f["path"]) for f in sources))
first_lines = {f["path"]: text.split("\n")[0] for f, text in zip(sources, contents)}
print(json.dumps(first_lines))
