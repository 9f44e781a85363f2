// want: {"totalFailed":2,"summary":[{"pkg":"./store","passed":2,"failed":1,"ms":51,"messages":["Load(\"x\") ok = true, want false"]},{"pkg":"./cart","passed":1,"failed":1,"ms":12,"messages":["Discount(100, 15) = 86, want 85"]},{"pkg":"./api","passed":1,"failed":0,"ms":34,"messages":[]}]}
const summary = [];
for (const pkg of ["./store", "./cart", "./api"]) {
  const out = await tools.run_tests({ package: pkg });
  const passed = (out.match(/^--- PASS/gm) || []).length;
  const failed = (out.match(/^--- FAIL/gm) || []).length;
  const timeMatch = out.match(/\t([\d.]+)s\s*$/);
  const ms = timeMatch ? Math.round(parseFloat(timeMatch[1]) * 1000) : NaN;
  const messages = out
    .split("\n")
    .filter((l) => /^\s+\w+_test\.go:\d+:/.test(l))
    .map((l) => l.trim().replace(/^\w+_test\.go:\d+: /, ""));
  summary.push({ pkg, passed, failed, ms, messages });
}
const totalFailed = summary.reduce((n, s) => n + s.failed, 0);
return { totalFailed, summary };
