// want: O#5(5) O#3(2) O#6(1) O#4(0) C#2(7) C#1(4)
const issues = await Promise.all([6, 5, 4, 3, 2, 1].map((id) => tools.get_issue({ id })));
const stateOrder = { open: 0, closed: 1 };
issues.sort(
  (a, b) =>
    stateOrder[a.state] - stateOrder[b.state] ||
    b.comments - a.comments ||
    a.id - b.id
);
return issues.map((i) => `${i.state[0].toUpperCase()}#${i.id}(${i.comments})`).join(" ");
