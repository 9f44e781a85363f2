package toolloop

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaKey identifies a schema by content: the SHA-256 of its compact
// JSON bytes, so schemas that differ only in white space share a key.
type schemaKey [sha256.Size]byte

func keyOf(raw json.RawMessage, buf *bytes.Buffer) schemaKey {
	buf.Reset()
	if json.Compact(buf, raw) != nil {
		return sha256.Sum256(raw) // not JSON: compiling it fails anyway
	}
	return sha256.Sum256(buf.Bytes())
}

// compiledSchema is what compiling one schema yields, shared by every
// tool whose schema has its key.
type compiledSchema struct {
	schema *jsonschema.Schema
	fast   *fastSchema
}

// schemaCache remembers the schemas of a registry's tools, so that a tool
// whose schema is identical to one already compiled is not compiled again:
// most tools of a program or a server share a few shapes, and compiling
// costs about 100 µs a schema. It holds only schemas of tools the registry
// has (commit adds them, sweep drops those no tool uses any more), so it
// never outgrows the registry. The zero value is ready to use.
type schemaCache struct {
	mu sync.Mutex
	m  map[schemaKey]*compiledSchema
}

func (c *schemaCache) get(k schemaKey) *compiledSchema {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[k]
}

// commit remembers the schemas of entries the registry now has.
func (c *schemaCache) commit(entries []*entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[schemaKey]*compiledSchema)
	}
	for _, e := range entries {
		if _, ok := c.m[e.key]; !ok {
			c.m[e.key] = &compiledSchema{schema: e.schema, fast: e.fast}
		}
	}
}

// sweep forgets every schema that no tool of sources uses.
func (c *schemaCache) sweep(sources []*sourceState) {
	live := make(map[schemaKey]bool)
	for _, st := range sources {
		for _, e := range st.tools {
			live[e.key] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !live[k] {
			delete(c.m, k)
		}
	}
}

// compileTools checks and compiles a source's tools.
func compileTools(kind SourceKind, source string, tools []Tool) ([]*entry, error) {
	return (*schemaCache)(nil).compileTools(kind, source, tools, nil)
}

// compileTools checks and compiles a source's tools, compiling each
// distinct schema not in the cache once, several at a time when there
// are many. taken, if not nil, reports names the source has already. The
// error is the one the first faulty tool, in order, would give.
func (c *schemaCache) compileTools(kind SourceKind, source string, tools []Tool, taken func(string) bool) ([]*entry, error) {
	entries := make([]*entry, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	var nameErr error // the first error about a tool itself; tools after it do not count
	var buf bytes.Buffer
	for _, t := range tools {
		if t == nil {
			nameErr = fmt.Errorf("toolloop: source %q: nil tool", source)
			break
		}
		spec := t.Spec()
		if !ValidToolName(spec.Name) {
			nameErr = fmt.Errorf("toolloop: source %q: invalid tool name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -", source, spec.Name)
			break
		}
		if seen[spec.Name] || taken != nil && taken(spec.Name) {
			nameErr = fmt.Errorf("%w: source %q has two tools named %q", ErrToolNameTaken, source, spec.Name)
			break
		}
		seen[spec.Name] = true
		if len(spec.InputSchema) == 0 {
			spec.InputSchema = emptyObjectSchema
		}
		entries = append(entries, &entry{tool: t, spec: spec, key: keyOf(spec.InputSchema, &buf), kind: kind, source: source})
	}

	// The distinct schemas the cache lacks, each compiled once.
	todo := map[schemaKey]*compileJob{}
	var jobs []*compileJob
	for _, e := range entries {
		if cs := c.get(e.key); cs != nil {
			e.schema, e.fast = cs.schema, cs.fast
			continue
		}
		if todo[e.key] == nil {
			j := &compileJob{name: e.spec.Name, raw: e.spec.InputSchema}
			todo[e.key] = j
			jobs = append(jobs, j)
		}
	}
	runCompileJobs(jobs)
	for _, e := range entries {
		j := todo[e.key]
		if j == nil {
			continue
		}
		if j.err != nil {
			return nil, fmt.Errorf("toolloop: source %q: tool %q: %w", source, e.spec.Name, j.err)
		}
		e.schema, e.fast = j.schema, j.fast
	}
	if nameErr != nil {
		return nil, nameErr
	}
	return entries, nil
}

type compileJob struct {
	name string
	raw  json.RawMessage
	compiledSchema
	err error
}

// run compiles the job's schema. A panic in the schema library, on a
// schema a source made up, is an error, not the end of the program.
func (j *compileJob) run() {
	defer func() {
		if p := recover(); p != nil {
			j.err = fmt.Errorf("input schema: the schema compiler panicked: %v", p)
		}
	}()
	j.schema, j.err = compileSchemaFunc(j.name, j.raw)
	if j.err == nil {
		j.fast = compileFast(j.raw)
	}
}

// compileSchemaFunc is compileSchema; a test makes it panic.
var compileSchemaFunc = compileSchema

// compileJobsPerWorker is how many schemas make it worth starting another
// goroutine to compile them.
const compileJobsPerWorker = 8

// runCompileJobs runs the jobs, on up to GOMAXPROCS goroutines when there
// are many, and returns when all are done.
func runCompileJobs(jobs []*compileJob) {
	workers := min(runtime.GOMAXPROCS(0), len(jobs)/compileJobsPerWorker)
	if workers <= 1 {
		for _, j := range jobs {
			j.run()
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				jobs[i].run()
			}
		})
	}
	wg.Wait()
}
