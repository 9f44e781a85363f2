// want: cart=3 api=2 shop=2
const text = await tools.read_file({ path: "README.md" });
const stop = new Set(["a", "an", "the", "and", "to"]);
const counts = {};
for (const word of text.toLowerCase().split(/[^a-z]+/)) {
  if (!word || stop.has(word)) continue;
  counts[word] = (counts[word] || 0) + 1;
}
const top = Object.entries(counts)
  .sort(([wa, a], [wb, b]) => b - a || wa.localeCompare(wb))
  .slice(0, 3);
return top.map(([w, n]) => `${w}=${n}`).join(" ");
