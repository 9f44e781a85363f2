// want: #1 is already closed; nothing to do
const issue = await tools.get_issue({ id: 1 });
if (issue.state === "closed") {
  return `#${issue.id} is already closed; nothing to do`;
}
const tests = await tools.run_tests({ package: "./cart" });
return tests.includes("FAIL") ? "still failing" : "ready to close";
