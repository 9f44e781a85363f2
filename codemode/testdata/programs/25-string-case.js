// want: apiHandlers,apiHandlersTest,apiServer,cartCart,cartCartTest,cartDiscount,storeStore,storeStoreTest
const files = await tools.list_files({ dir: "." });
const toCamel = (s) =>
  s
    .replace(/\.[a-z]+$/, "")
    .split(/[\/_\-.]/)
    .filter(Boolean)
    .map((part, i) => (i === 0 ? part.toLowerCase() : part[0].toUpperCase() + part.slice(1).toLowerCase()))
    .join("");
return files
  .filter((f) => f.path.endsWith(".go"))
  .map((f) => toCamel(f.path))
  .join(",");
