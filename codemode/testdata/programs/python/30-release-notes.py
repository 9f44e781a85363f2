# want: "Release v0.2.0\n- Add discounts (#2, closed, @ben)\n- Search endpoint (#4, open, @ana)\nWARNING: 1 listed issue(s) still open: #4"
import asyncio
import re

changelog = await read_file(path="CHANGELOG.md")
latest = re.split(r"^## ", changelog, flags=re.M)[1]
version, *entries = latest.strip().split("\n")
refs = [int(m.group(1)) for e in entries if (m := re.search(r"#(\d+)", e))]
issues = await asyncio.gather(*(get_issue(id=i) for i in refs))
notes = [
    f"- {i['title']} (#{i['id']}, {i['state']}, {'@' + i['assignee'] if i['assignee'] else 'unassigned'})"
    for i in issues
]
still_open = [i for i in issues if i["state"] != "closed"]
report = f"Release {version}\n" + "\n".join(notes)
if still_open:
    report += f"\nWARNING: {len(still_open)} listed issue(s) still open: {', '.join('#' + str(i['id']) for i in still_open)}"
print(report)
