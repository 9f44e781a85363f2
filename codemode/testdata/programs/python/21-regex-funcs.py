# want: 3 funcs (3 exported): Cart.Add, Cart.Total, Empty
import re

src = await read_file(path="cart/cart.go")
funcs = []
for m in re.finditer(r"^func (?:\((\w+) \*?(\w+)\) )?(\w+)\(", src, re.MULTILINE):
    _, recv, name = m.groups()
    funcs.append(f"{recv}.{name}" if recv else name)
exported = [f for f in funcs if f.split(".")[-1][0].isupper()]
print(f"{len(funcs)} funcs ({len(exported)} exported): {', '.join(funcs)}")
