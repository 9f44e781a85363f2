// want: {"totals":{".":269,"api":477,"cart":701,"config":136,"store":433},"biggest":"cart"}
const files = await tools.list_files({ dir: "." });
const totals = files.reduce((acc, { path, size }) => {
  const [dir] = path.split("/");
  const key = path.includes("/") ? dir : ".";
  acc[key] = (acc[key] || 0) + size;
  return acc;
}, {});
const biggest = Object.keys(totals).reduce((a, b) => (totals[a] >= totals[b] ? a : b));
return { totals, biggest };
