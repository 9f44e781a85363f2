// want: {"calls": 2, "hits": 3, "packageNames": ["cart", "cart", "store", "cart", "store"]}
function cached(fn) {
  const cache = new Map();
  let calls = 0;
  let hits = 0;
  const get = async (key) => {
    if (cache.has(key)) {
      hits++;
      return cache.get(key);
    }
    calls++;
    const value = await fn(key);
    cache.set(key, value);
    return value;
  };
  get.stats = () => ({ calls, hits });
  return get;
}

const readFile = cached((path) => tools.read_file({ path }));
const paths = ["cart/cart.go", "cart/cart.go", "store/store.go", "cart/cart.go", "store/store.go"];
const packageNames = [];
for (const p of paths) {
  const src = await readFile(p);
  packageNames.push(src.match(/^package (\w+)$/m)[1]);
}
return { ...readFile.stats(), packageNames };
