// want: "Release v0.2.0\n- Add discounts (#2, closed, @ben)\n- Search endpoint (#4, open, @ana)\nWARNING: 1 listed issue(s) still open: #4"
const changelog = await tools.read_file({ path: "CHANGELOG.md" });
const latest = changelog.split(/^## /m)[1];
const [version, ...entries] = latest.trim().split("\n");
const refs = entries.map((e) => Number(e.match(/#(\d+)/)?.[1])).filter((n) => !Number.isNaN(n));
const issues = await Promise.all(refs.map((id) => tools.get_issue({ id })));
const notes = issues.map((i) => {
  const who = i.assignee ? `@${i.assignee}` : "unassigned";
  return `- ${i.title} (#${i.id}, ${i.state}, ${who})`;
});
const open = issues.filter((i) => i.state !== "closed");
let report = `Release ${version}\n${notes.join("\n")}`;
if (open.length > 0) {
  report += `\nWARNING: ${open.length} listed issue(s) still open: ${open.map((i) => "#" + i.id).join(", ")}`;
}
return report;
