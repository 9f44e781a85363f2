# want: start > run ./vendor > failed: not_found > cleanup > run ./api > ok
import re

log = ["start"]
for pkg in ["./vendor", "./api"]:
    try:
        log.append(f"run {pkg}")
        out = await run_tests(package=pkg)
        log.append("ok" if re.search(r"^ok\s", out, re.M) else "failing")
    except ToolError as e:
        log.append(f"failed: {e.kind}")
    finally:
        if pkg == "./vendor":
            log.append("cleanup")
print(" > ".join(log))
