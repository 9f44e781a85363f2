# want: O#5(5) O#3(2) O#6(1) O#4(0) C#2(7) C#1(4)
import asyncio

issues = await asyncio.gather(*(get_issue(id=i) for i in [6, 5, 4, 3, 2, 1]))
state_order = {"open": 0, "closed": 1}
issues = sorted(issues, key=lambda i: (state_order[i["state"]], -i["comments"], i["id"]))
print(" ".join(f"{i['state'][0].upper()}#{i['id']}({i['comments']})" for i in issues))
