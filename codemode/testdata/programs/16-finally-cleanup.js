// want: start > run ./vendor > failed: not_found > cleanup > run ./api > ok
const log = [];
log.push("start");
for (const pkg of ["./vendor", "./api"]) {
  try {
    log.push(`run ${pkg}`);
    const out = await tools.run_tests({ package: pkg });
    log.push(/^ok\s/m.test(out) ? "ok" : "failing");
  } catch (e) {
    log.push(`failed: ${e.kind}`);
  } finally {
    if (pkg === "./vendor") log.push("cleanup");
  }
}
return log.join(" > ");
