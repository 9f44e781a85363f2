package codemode_test

// The fixture tools the 30 programs of testdata/programs call: a small Go
// repository to list, read and search, the output of its tests, an issue
// tracker and a few JSON endpoints. Everything is fixed, so each program
// has one right answer (its "// want:" line).

import (
	"context"
	"slices"
	"strings"

	"github.com/toolloop/toolloop"
)

// fixtureFiles is the repository the file tools see.
var fixtureFiles = map[string]string{
	"go.mod":       "module example.com/shop\n\ngo 1.26\n",
	"README.md":    "# shop\n\nA tiny shop service: a cart, a store and an API.\nThe cart computes totals; the store keeps the cart.\n\nTODO: document the API.\n",
	"CHANGELOG.md": "# Changelog\n\n## v0.2.0\n- discounts in the cart (#2)\n- search endpoint (#4)\n\n## v0.1.0\n- first release\n",
	"cart/cart.go": "// Package cart computes what a customer owes.\n" +
		"package cart\n\n" +
		"// Item is one line of a cart.\n" +
		"type Item struct {\n\tSKU   string\n\tPrice int\n\tQty   int\n}\n\n" +
		"// Cart holds items.\n" +
		"type Cart struct{ Items []Item }\n\n" +
		"func (c *Cart) Add(it Item) { c.Items = append(c.Items, it) }\n\n" +
		"func (c *Cart) Total() int {\n\tt := 0\n\tfor _, it := range c.Items {\n\t\tt += it.Price * it.Qty\n\t}\n\treturn t // TODO: currency\n}\n\n" +
		"func Empty() *Cart { return &Cart{} }\n",
	"cart/discount.go": "// Discounts for carts.\n" +
		"package cart\n\n" +
		"// Discount takes pct percent off the total.\n" +
		"func Discount(total, pct int) int {\n\treturn total - total*pct/100 // TODO: rounding\n}\n",
	"cart/cart_test.go": "package cart\n\nimport \"testing\"\n\n" +
		"func TestTotal(t *testing.T) {}\n\nfunc TestDiscount(t *testing.T) {}\n",
	"api/server.go": "// Server serves the shop over HTTP.\n" +
		"package api\n\n" +
		"import \"net/http\"\n\n" +
		"func NewServer() *http.ServeMux {\n\tmux := http.NewServeMux()\n\tmux.HandleFunc(\"/cart\", handleCart)\n\tmux.HandleFunc(\"/search\", handleSearch)\n\treturn mux\n}\n",
	"api/handlers.go": "// Handlers of the API.\n" +
		"package api\n\n" +
		"import \"net/http\"\n\n" +
		"func handleCart(w http.ResponseWriter, r *http.Request) {}\n\n" +
		"func handleSearch(w http.ResponseWriter, r *http.Request) {} // TODO: paging\n",
	"api/handlers_test.go": "package api\n\nimport \"testing\"\n\nfunc TestCart(t *testing.T) {}\n",
	"store/store.go": "// Package store keeps carts.\n" +
		"package store\n\n" +
		"type Store struct{ carts map[string]int }\n\n" +
		"func New() *Store { return &Store{carts: map[string]int{}} }\n\n" +
		"func (s *Store) Save(id string, total int) { s.carts[id] = total }\n\n" +
		"func (s *Store) Load(id string) (int, bool) {\n\tv, ok := s.carts[id]\n\treturn v, ok\n}\n",
	"store/store_test.go": "package store\n\nimport \"testing\"\n\nfunc TestSave(t *testing.T) {}\n\nfunc TestLoad(t *testing.T) {}\n\nfunc TestMissing(t *testing.T) {}\n",
	"config/app.json":     `{"name": "shop", "port": 8080, "features": {"discounts": true, "search": false}, "owners": ["ana", "ben"], "limits": {"max_items": 50}}` + "\n",
}

// fixtureTests is what run_tests prints for each package.
var fixtureTests = map[string]string{
	"./cart": "=== RUN   TestTotal\n--- PASS: TestTotal (0.00s)\n=== RUN   TestDiscount\n" +
		"    discount_test.go:14: Discount(100, 15) = 86, want 85\n--- FAIL: TestDiscount (0.00s)\n" +
		"FAIL\nFAIL\texample.com/shop/cart\t0.012s\n",
	"./api": "=== RUN   TestCart\n--- PASS: TestCart (0.01s)\nPASS\nok  \texample.com/shop/api\t0.034s\n",
	"./store": "=== RUN   TestSave\n--- PASS: TestSave (0.00s)\n=== RUN   TestLoad\n--- PASS: TestLoad (0.00s)\n" +
		"=== RUN   TestMissing\n--- FAIL: TestMissing (0.02s)\n    store_test.go:30: Load(\"x\") ok = true, want false\n" +
		"FAIL\nFAIL\texample.com/shop/store\t0.051s\n",
}

// fixtureIssue is an issue of the tracker get_issue reads.
type fixtureIssue struct {
	ID       int      `json:"id"`
	Title    string   `json:"title"`
	State    string   `json:"state"`
	Labels   []string `json:"labels"`
	Assignee *string  `json:"assignee"`
	Comments int      `json:"comments"`
}

func ptr(s string) *string { return &s }

var fixtureIssues = map[int]fixtureIssue{
	1: {1, "Cart total ignores quantity", "closed", []string{"bug", "cart"}, ptr("ana"), 4},
	2: {2, "Add discounts", "closed", []string{"feature", "cart"}, ptr("ben"), 7},
	3: {3, "Discount rounds the wrong way", "open", []string{"bug", "cart"}, nil, 2},
	4: {4, "Search endpoint", "open", []string{"feature", "api"}, ptr("ana"), 0},
	5: {5, "Store forgets missing carts", "open", []string{"bug", "store"}, ptr("ben"), 5},
	6: {6, "Document the API", "open", []string{"docs"}, nil, 1},
}

// fixtureURLs are the documents fetch_json serves.
var fixtureURLs = map[string]any{
	"https://api.example.com/users": []any{
		map[string]any{"id": 1, "name": "Ana", "team": "core", "email": "ana@example.com"},
		map[string]any{"id": 2, "name": "Ben", "team": "core", "email": "ben@example.com"},
		map[string]any{"id": 3, "name": "Cleo", "team": "web", "email": "cleo@example.com"},
		map[string]any{"id": 4, "name": "Dev", "team": "web"},
	},
	"https://api.example.com/teams": map[string]any{
		"core": map[string]any{"lead": "Ana", "repo": "shop"},
		"web":  map[string]any{"lead": "Cleo", "repo": "shop-web"},
	},
	"https://api.example.com/users/1/profile": map[string]any{
		"name": "Ana", "address": map[string]any{"city": "Lisbon", "zip": "1100-001"},
		"settings": map[string]any{"theme": "dark"},
	},
	"https://api.example.com/users/4/profile": map[string]any{"name": "Dev"},
	"https://status.example.com/health": map[string]any{
		"checked": "2026-11-28T08:00:00Z",
		"services": []any{
			map[string]any{"name": "api", "status": "ok", "latency_ms": 42},
			map[string]any{"name": "db", "status": "degraded", "latency_ms": 870},
			map[string]any{"name": "search", "status": "down", "latency_ms": nil},
			map[string]any{"name": "cache", "status": "ok", "latency_ms": 3},
		},
	},
	"https://api.example.com/orders?page=1": map[string]any{
		"orders": []any{map[string]any{"id": "o1", "total": 1250}, map[string]any{"id": "o2", "total": 399}},
		"next":   "https://api.example.com/orders?page=2",
	},
	"https://api.example.com/orders?page=2": map[string]any{
		"orders": []any{map[string]any{"id": "o3", "total": 5000}, map[string]any{"id": "o4", "total": 75}},
		"next":   "https://api.example.com/orders?page=3",
	},
	"https://api.example.com/orders?page=3": map[string]any{
		"orders": []any{map[string]any{"id": "o5", "total": 820}},
		"next":   nil,
	},
	"https://mirror2.example.com/rates.json": map[string]any{"base": "EUR", "rates": map[string]any{"USD": 1.08, "GBP": 0.86, "JPY": 162.5}},
}

// fileEntry is one entry list_files returns.
type fileEntry struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

// searchHit is one hit search returns.
type searchHit struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// fixtureTools returns the tools the programs call. Each fails as a real
// tool would: a path, package, issue or URL it does not know is a
// not_found tool error.
func fixtureTools() []toolloop.Tool {
	return []toolloop.Tool{
		toolloop.NewTool("list_files", "List the files under a directory of the repository (\".\" for all), with their sizes in bytes, sorted by path.",
			func(_ context.Context, in struct {
				Dir string `json:"dir" jsonschema:"description=a directory such as cart or ."`
			}) (any, error) {
				prefix := strings.TrimSuffix(strings.TrimPrefix(in.Dir, "./"), "/") + "/"
				if prefix == "./" || prefix == "/" {
					prefix = ""
				}
				out := []fileEntry{}
				for p, text := range fixtureFiles {
					if strings.HasPrefix(p, prefix) {
						out = append(out, fileEntry{p, len(text)})
					}
				}
				if len(out) == 0 {
					return nil, toolloop.Errorf(toolloop.KindNotFound, "no directory %q", in.Dir)
				}
				slices.SortFunc(out, func(a, b fileEntry) int { return strings.Compare(a.Path, b.Path) })
				return out, nil
			}),
		toolloop.NewTool("read_file", "Read a file of the repository as text.",
			func(_ context.Context, in struct {
				Path string `json:"path"`
			}) (any, error) {
				text, ok := fixtureFiles[strings.TrimPrefix(in.Path, "./")]
				if !ok {
					return nil, toolloop.Errorf(toolloop.KindNotFound, "no file %q", in.Path)
				}
				return text, nil
			}),
		toolloop.NewTool("search", "Search the repository's files for lines containing query (case-sensitive). Hits are sorted by path and line; lines count from 1.",
			func(_ context.Context, in struct {
				Query string `json:"query"`
			}) (any, error) {
				hits := []searchHit{}
				for p, text := range fixtureFiles {
					for i, line := range strings.Split(text, "\n") {
						if strings.Contains(line, in.Query) {
							hits = append(hits, searchHit{p, i + 1, strings.TrimSpace(line)})
						}
					}
				}
				slices.SortFunc(hits, func(a, b searchHit) int {
					if c := strings.Compare(a.Path, b.Path); c != 0 {
						return c
					}
					return a.Line - b.Line
				})
				return hits, nil
			}),
		toolloop.NewTool("run_tests", "Run go test -v on a package such as ./cart and return its output.",
			func(_ context.Context, in struct {
				Package string `json:"package"`
			}) (any, error) {
				out, ok := fixtureTests[in.Package]
				if !ok {
					return nil, toolloop.Errorf(toolloop.KindNotFound, "no package %q", in.Package)
				}
				return out, nil
			}),
		toolloop.NewTool("get_issue", "Get an issue of the tracker by number.",
			func(_ context.Context, in struct {
				ID int `json:"id"`
			}) (any, error) {
				is, ok := fixtureIssues[in.ID]
				if !ok {
					return nil, toolloop.Errorf(toolloop.KindNotFound, "no issue %d", in.ID)
				}
				return is, nil
			}),
		toolloop.NewTool("fetch_json", "GET a URL and return its JSON body.",
			func(_ context.Context, in struct {
				URL string `json:"url"`
			}) (any, error) {
				doc, ok := fixtureURLs[in.URL]
				if !ok {
					return nil, toolloop.Errorf(toolloop.KindNotFound, "404 for %s", in.URL)
				}
				return doc, nil
			}),
	}
}

// fixtureRegistry returns a registry holding the fixture tools.
func fixtureRegistry() *toolloop.ToolRegistry {
	reg := &toolloop.ToolRegistry{}
	reg.MustRegister(fixtureTools()...)
	return reg
}
