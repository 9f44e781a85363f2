// want: {"openBugs":["#3 Discount rounds the wrong way","#5 Store forgets missing carts"],"missing":[7]}
const ids = [1, 2, 3, 4, 5, 6, 7];
const results = await Promise.allSettled(ids.map((id) => tools.get_issue({ id })));
const openBugs = [];
const missing = [];
results.forEach((r, i) => {
  if (r.status === "rejected") {
    missing.push(ids[i]);
    return;
  }
  const issue = r.value;
  if (issue.state === "open" && issue.labels.includes("bug")) {
    openBugs.push(`#${issue.id} ${issue.title}`);
  }
});
return { openBugs, missing };
