// want: {"counts":[{"q":"Total","hits":2,"files":2},{"q":"Discount","hits":4,"files":2},{"q":"Save","hits":2,"files":2},{"q":"Refund","hits":0,"files":0}],"unused":["Refund"]}
const queries = ["Total", "Discount", "Save", "Refund"];
const counts = await Promise.all(
  queries.map(async (q) => {
    const hits = await tools.search({ query: q });
    const files = new Set(hits.map((h) => h.path));
    return { q, hits: hits.length, files: files.size };
  })
);
const unused = counts.filter((c) => c.hits === 0).map((c) => c.q);
return { counts, unused };
