# want: 8 Go files, 3 of them tests
files = await list_files(dir=".")
go_files = 0
test_files = 0
for f in files:
    if not f["path"].endswith(".go"):
        continue
    go_files += 1
    if f["path"].endswith("_test.go"):
        test_files += 1
print(f"{go_files} Go files, {test_files} of them tests")
