// want: issue 99 does not exist (not_found); issue 3 is open
async function describe(id) {
  try {
    const issue = await tools.get_issue({ id });
    return `issue ${id} is ${issue.state}`;
  } catch (err) {
    if (err.name === "ToolError" && err.kind === "not_found") {
      return `issue ${id} does not exist (${err.kind})`;
    }
    throw err;
  }
}
const parts = [];
for (const id of [99, 3]) {
  parts.push(await describe(id));
}
return parts.join("; ");
