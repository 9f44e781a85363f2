// want: {"failed":2,"tests":["cart.TestDiscount","store.TestMissing"]}
const packages = ["./cart", "./api", "./store"];
const outputs = await Promise.all(packages.map((pkg) => tools.run_tests({ package: pkg })));
const failures = [];
outputs.forEach((out, i) => {
  for (const m of out.matchAll(/--- FAIL: (\w+) \(([\d.]+)s\)/g)) {
    failures.push(`${packages[i].replace("./", "")}.${m[1]}`);
  }
});
return { failed: failures.length, tests: failures };
