// want: {".":{"files":3,"mean":89.7,"max":134},"api":{"files":3,"mean":159,"max":222},"cart":{"files":3,"mean":233.7,"max":432},"config":{"files":1,"mean":136,"max":136},"store":{"files":2,"mean":216.5,"max":302}}
class Stats {
  constructor() {
    this.values = [];
  }
  add(v) {
    this.values.push(v);
    return this;
  }
  get count() {
    return this.values.length;
  }
  get mean() {
    return this.values.reduce((a, b) => a + b, 0) / this.count;
  }
  get max() {
    return Math.max(...this.values);
  }
}

const byDir = {};
for (const f of await tools.list_files({ dir: "." })) {
  const dir = f.path.includes("/") ? f.path.slice(0, f.path.lastIndexOf("/")) : ".";
  (byDir[dir] ??= new Stats()).add(f.size);
}
const out = {};
for (const [dir, s] of Object.entries(byDir)) {
  out[dir] = { files: s.count, mean: Math.round(s.mean * 10) / 10, max: s.max };
}
return out;
