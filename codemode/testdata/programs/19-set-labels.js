// want: {"labels":["api","bug","cart","docs","feature","store"],"onlyClosed":[]}
const issues = await Promise.all([1, 2, 3, 4, 5, 6].map((id) => tools.get_issue({ id })));
const labels = new Set();
const openLabels = new Set();
for (const issue of issues) {
  issue.labels.forEach((l) => labels.add(l));
  if (issue.state === "open") issue.labels.forEach((l) => openLabels.add(l));
}
const onlyClosed = [...labels].filter((l) => !openLabels.has(l));
return { labels: [...labels].sort(), onlyClosed };
