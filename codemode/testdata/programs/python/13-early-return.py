# want: #1 is already closed; nothing to do
async def main():
    issue = await get_issue(id=1)
    if issue["state"] == "closed":
        return f"#{issue['id']} is already closed; nothing to do"
    tests = await run_tests(package="./cart")
    return "still failing" if "FAIL" in tests else "ready to close"

print(await main())
