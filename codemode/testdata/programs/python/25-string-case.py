# want: apiHandlers,apiHandlersTest,apiServer,cartCart,cartCartTest,cartDiscount,storeStore,storeStoreTest
import re

files = await list_files(dir=".")


def to_camel(s):
    parts = [p for p in re.split(r"[/_\-.]", re.sub(r"\.[a-z]+$", "", s)) if p]
    return parts[0].lower() + "".join(p.capitalize() for p in parts[1:])


print(",".join(to_camel(f["path"]) for f in files if f["path"].endswith(".go")))
