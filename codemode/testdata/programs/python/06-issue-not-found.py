# want: issue 99 does not exist (not_found); issue 3 is open
async def describe(issue_id):
    try:
        issue = await get_issue(id=issue_id)
        return f"issue {issue_id} is {issue['state']}"
    except ToolError as e:
        if e.kind == "not_found":
            return f"issue {issue_id} does not exist ({e.kind})"
        raise

parts = []
for issue_id in [99, 3]:
    parts.append(await describe(issue_id))
print("; ".join(parts))
