// want: 8 Go files, 3 of them tests
const files = await tools.list_files({ dir: "." });
let goFiles = 0;
let testFiles = 0;
for (const f of files) {
  if (!f.path.endsWith(".go")) continue;
  goFiles++;
  if (f.path.endsWith("_test.go")) testFiles++;
}
return `${goFiles} Go files, ${testFiles} of them tests`;
