# want: {"totalFailed":2,"summary":[{"pkg":"./store","passed":2,"failed":1,"ms":51,"messages":["Load(\"x\") ok = true, want false"]},{"pkg":"./cart","passed":1,"failed":1,"ms":12,"messages":["Discount(100, 15) = 86, want 85"]},{"pkg":"./api","passed":1,"failed":0,"ms":34,"messages":[]}]}
import json
import re

summary = []
for pkg in ["./store", "./cart", "./api"]:
    out = await run_tests(package=pkg)
    passed = len(re.findall(r"^--- PASS", out, re.M))
    failed = len(re.findall(r"^--- FAIL", out, re.M))
    m = re.search(r"\t([\d.]+)s\s*$", out)
    ms = round(float(m.group(1)) * 1000) if m else None
    messages = [
        re.sub(r"^\w+_test\.go:\d+: ", "", line.strip())
        for line in out.split("\n")
        if re.match(r"^\s+\w+_test\.go:\d+:", line)
    ]
    summary.append({"pkg": pkg, "passed": passed, "failed": failed, "ms": ms, "messages": messages})
total_failed = sum(s["failed"] for s in summary)
print(json.dumps({"totalFailed": total_failed, "summary": summary}))
