// want: {"fix":[3,5],"build":[4],"write":[6],"done":[1,2]}
const issues = [];
for (let id = 1; id <= 6; id++) {
  issues.push(await tools.get_issue({ id }));
}
const buckets = { fix: [], build: [], write: [], done: [] };
for (const issue of issues) {
  if (issue.state === "closed") {
    buckets.done.push(issue.id);
    continue;
  }
  switch (issue.labels[0]) {
    case "bug":
      buckets.fix.push(issue.id);
      break;
    case "feature":
      buckets.build.push(issue.id);
      break;
    default:
      buckets.write.push(issue.id);
  }
}
return buckets;
