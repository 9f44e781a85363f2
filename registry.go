package toolloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Source supplies tools to a [ToolRegistry]: the built-in workspace tools,
// a plugin process, an MCP server.
//
// Tools is called when the source is added and again whenever the source
// reports a change through [Notifier]. It must be safe for concurrent use.
type Source interface {
	// Name identifies the source in results and events: an MCP server's or
	// a plugin's name. Names are unique within a registry.
	Name() string
	Kind() SourceKind
	Tools(ctx context.Context) ([]Tool, error)
}

// Notifier is an optional ability of a [Source] whose tool list changes at
// run time, as an MCP server's does. The registry calls Notify once, when
// the source is added; the source calls changed (from any goroutine, as
// often as it likes, even from within Notify) whenever its list has
// changed, and the registry reads the list again before its next lookup.
// changed only sets a flag: it is cheap and never blocks.
type Notifier interface {
	Notify(changed func())
}

// NewSource returns a [Source] over a fixed list of tools.
func NewSource(name string, kind SourceKind, tools ...Tool) Source {
	return &staticSource{name: name, kind: kind, tools: slices.Clone(tools)}
}

type staticSource struct {
	name  string
	kind  SourceKind
	tools []Tool
}

func (s *staticSource) Name() string                          { return s.name }
func (s *staticSource) Kind() SourceKind                      { return s.kind }
func (s *staticSource) Tools(context.Context) ([]Tool, error) { return s.tools, nil }

// LocalSource is the name of the source, of kind [SourceLocal], that
// [ToolRegistry.Register] adds tools to. No other source may take it.
const LocalSource = "local"

// ErrToolNameTaken: a tool's name is already taken, by another tool of
// the same source or, unless ToolRegistry.AllowShadowing is set, by a tool
// of another source.
var ErrToolNameTaken = errors.New("toolloop: tool name already taken")

// Shadowing reports a tool that is hidden because an earlier source has a
// tool of the same name. Kinds resolve local, then builtin, then plugin,
// then mcp; sources of one kind resolve in the order they were added.
type Shadowing struct {
	Name string `json:"name"`
	// Winner and Loser name the sources as "kind:name".
	Winner string `json:"winner"`
	Loser  string `json:"loser"`
}

// ToolRegistry holds the tools the model may call, from several sources,
// and resolves a name to one tool. Its zero value is an empty registry
// ready to use. It is safe for concurrent use.
//
// A tool name belongs to one tool: Register and AddSource refuse a tool
// whose name another source already has ([ErrToolNameTaken]), unless
// AllowShadowing is set. A name that two sources come to share later,
// when a source's tool list changes at run time, resolves by kind (local,
// builtin, plugin, mcp; sources of one kind in the order they were added),
// is logged as a warning and is listed by [ToolRegistry.Shadowed].
type ToolRegistry struct {
	// Logger, if set, receives reports of shadowed tools and of sources
	// that fail to refresh. Set it before adding sources.
	Logger *slog.Logger
	// AllowShadowing lets sources share tool names: Register and
	// AddSource accept a taken name, the name resolves by kind as above,
	// and Shadowed lists the tools hidden. Use it to replace a builtin
	// tool with one of your own (local tools win), or to let several
	// sources offer the same tool. Set it before adding sources.
	AllowShadowing bool

	mu        sync.Mutex // serializes changes
	refreshMu sync.Mutex // one refresh at a time
	sources   []*sourceState
	local     []Tool
	dirty     atomic.Bool
	snap      atomic.Pointer[snapshot]
}

type sourceState struct {
	src   Source
	kind  SourceKind
	name  string
	order int
	tools []*entry
	stale atomic.Bool
}

// entry is a resolved, compiled tool.
type entry struct {
	tool   Tool
	spec   ToolSpec
	schema *jsonschema.Schema
	fast   *fastSchema // nil unless the schema is in the fast path's subset
	kind   SourceKind
	source string
}

type snapshot struct {
	byName   map[string]*entry
	specs    []ToolSpec // sorted by name
	shadowed []Shadowing
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidToolName reports whether name is a tool name every major provider
// accepts: 1 to 64 characters from a-z, A-Z, 0-9, _ and -.
func ValidToolName(name string) bool { return toolNameRE.MatchString(name) }

// kindRank is a kind's place in the resolution order; unknownKind for a
// kind the registry does not know.
func kindRank(k SourceKind) int {
	switch k {
	case SourceLocal:
		return 0
	case SourceBuiltin:
		return 1
	case SourcePlugin:
		return 2
	case SourceMCP:
		return 3
	}
	return unknownKind
}

const unknownKind = 4

// Register adds tools the program defines itself to the registry's own
// source, named [LocalSource], of kind [SourceLocal], which resolves
// before every other source. It fails, adding nothing, if a name is
// invalid or taken ([ErrToolNameTaken]: by a tool registered before, or,
// unless AllowShadowing is set, by another source's tool), or a schema
// does not compile.
func (r *ToolRegistry) Register(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append(slices.Clone(r.local), tools...)
	entries, err := compileTools(SourceLocal, LocalSource, all)
	if err != nil {
		return err
	}
	if err := r.checkTaken(LocalSource, SourceLocal, entries[len(r.local):]); err != nil {
		return err
	}
	st := r.find(LocalSource)
	if st == nil {
		st = &sourceState{src: NewSource(LocalSource, SourceLocal), kind: SourceLocal, name: LocalSource, order: -1}
		r.sources = append(r.sources, st)
	}
	st.tools = entries
	r.local = all
	r.rebuild()
	return nil
}

// MustRegister is like Register but panics on error. It suits tools
// defined in the program itself, where an error is a bug.
func (r *ToolRegistry) MustRegister(tools ...Tool) {
	if err := r.Register(tools...); err != nil {
		panic(err)
	}
}

// AddSource lists the source's tools now, compiles their schemas, and adds
// them to the registry. It fails, adding nothing, if the source cannot list
// its tools, its name is taken, or any of its tools has an invalid name, a
// name taken ([ErrToolNameTaken]: twice in the source, or, unless
// AllowShadowing is set, by another source's tool) or a schema that does
// not compile.
func (r *ToolRegistry) AddSource(ctx context.Context, src Source) error {
	if src == nil {
		return errors.New("toolloop: AddSource: nil source")
	}
	name, kind := src.Name(), src.Kind()
	if kindRank(kind) == unknownKind {
		return fmt.Errorf("toolloop: source %q: unknown kind %q", name, kind)
	}
	tools, err := src.Tools(ctx)
	if err != nil {
		return fmt.Errorf("toolloop: source %q: listing tools: %w", name, err)
	}
	entries, err := compileTools(kind, name, tools)
	if err != nil {
		return err
	}
	if name == LocalSource {
		return fmt.Errorf("toolloop: source name %q is reserved for Register", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.find(name) != nil {
		return fmt.Errorf("toolloop: source %q added twice", name)
	}
	if err := r.checkTaken(name, kind, entries); err != nil {
		return err
	}
	st := &sourceState{src: src, kind: kind, name: name, order: len(r.sources), tools: entries}
	r.sources = append(r.sources, st)
	r.rebuild()
	if n, ok := src.(Notifier); ok {
		n.Notify(func() {
			st.stale.Store(true)
			r.dirty.Store(true)
		})
	}
	return nil
}

// Refresh reads the tool list of every source that reported a change, in
// parallel, and waits for any refresh already under way. The registry
// refreshes by itself before a lookup; call Refresh to surface errors. A
// source that fails keeps its previous tools, and the error is returned.
//
// Sources are read without holding the registry's lock, so a slow source
// (an MCP server starting) never blocks lookups: while one goroutine
// refreshes, the others resolve against the registry as it stands.
func (r *ToolRegistry) Refresh(ctx context.Context) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	return r.refreshLocked(ctx)
}

// maybeRefresh refreshes if a source changed and no other goroutine is
// refreshing already.
func (r *ToolRegistry) maybeRefresh(ctx context.Context) {
	if r.dirty.Load() && r.refreshMu.TryLock() {
		_ = r.refreshLocked(ctx)
		r.refreshMu.Unlock()
	}
}

// refreshLocked does Refresh's work; r.refreshMu must be held.
func (r *ToolRegistry) refreshLocked(ctx context.Context) error {
	if !r.dirty.Swap(false) {
		return nil
	}
	r.mu.Lock()
	var stale []*sourceState
	for _, st := range r.sources {
		if st.stale.Swap(false) {
			stale = append(stale, st)
		}
	}
	r.mu.Unlock()

	entries := make([][]*entry, len(stale))
	errs := make([]error, len(stale))
	var wg sync.WaitGroup
	for i, st := range stale {
		wg.Go(func() {
			tools, err := st.src.Tools(ctx)
			if err == nil {
				entries[i], err = compileTools(st.kind, st.name, tools)
			}
			if err != nil {
				errs[i] = fmt.Errorf("toolloop: refreshing source %q: %w", st.name, err)
				r.logger().Warn("tool source refresh failed; keeping its previous tools", "source", st.name, "err", err)
			}
		})
	}
	wg.Wait()

	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for i, st := range stale {
		if errs[i] == nil {
			st.tools, changed = entries[i], true
		}
	}
	if changed {
		r.rebuild()
	}
	return errors.Join(errs...)
}

// Specs returns the spec of every tool the model may call, sorted by name,
// so the prompt is stable from turn to turn. The slice is shared: do not
// modify it.
func (r *ToolRegistry) Specs(ctx context.Context) []ToolSpec {
	r.maybeRefresh(ctx)
	if s := r.snap.Load(); s != nil {
		return s.specs
	}
	return nil
}

// Lookup returns the tool that name resolves to.
func (r *ToolRegistry) Lookup(ctx context.Context, name string) (Tool, bool) {
	e := r.resolve(ctx, name)
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

// Shadowed lists the tools hidden by a tool of the same name in an earlier
// source.
func (r *ToolRegistry) Shadowed() []Shadowing {
	if s := r.snap.Load(); s != nil {
		return slices.Clone(s.shadowed)
	}
	return nil
}

// Suggest returns up to three registered names close to name, closest
// first, for telling the model what it may have meant.
func (r *ToolRegistry) Suggest(name string) []string {
	s := r.snap.Load()
	if s == nil {
		return nil
	}
	names := make([]string, len(s.specs))
	for i, sp := range s.specs {
		names[i] = sp.Name
	}
	return closestNames(name, names, 3)
}

func (r *ToolRegistry) resolve(ctx context.Context, name string) *entry {
	r.maybeRefresh(ctx)
	s := r.snap.Load()
	if s == nil {
		return nil
	}
	return s.byName[name]
}

func (r *ToolRegistry) find(name string) *sourceState {
	for _, st := range r.sources {
		if st.name == name {
			return st
		}
	}
	return nil
}

func (r *ToolRegistry) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return discardLogger
}

var discardLogger = slog.New(slog.DiscardHandler)

// rebuild makes a new snapshot from the sources. r.mu must be held.
func (r *ToolRegistry) rebuild() {
	order := slices.Clone(r.sources)
	slices.SortStableFunc(order, func(a, b *sourceState) int {
		if d := kindRank(a.kind) - kindRank(b.kind); d != 0 {
			return d
		}
		return a.order - b.order
	})
	old := r.snap.Load()
	s := &snapshot{byName: map[string]*entry{}}
	for _, st := range order {
		for _, e := range st.tools {
			if w, taken := s.byName[e.spec.Name]; taken {
				sh := Shadowing{Name: e.spec.Name, Winner: string(w.kind) + ":" + w.source, Loser: string(e.kind) + ":" + e.source}
				s.shadowed = append(s.shadowed, sh)
				if old == nil || !slices.Contains(old.shadowed, sh) {
					level := slog.LevelWarn
					if r.AllowShadowing {
						level = slog.LevelInfo
					}
					r.logger().Log(context.Background(), level, "tool shadowed by an earlier source", "tool", sh.Name, "winner", sh.Winner, "loser", sh.Loser)
				}
				continue
			}
			s.byName[e.spec.Name] = e
			s.specs = append(s.specs, e.spec)
		}
	}
	slices.SortFunc(s.specs, func(a, b ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	r.snap.Store(s)
}

// compileTools checks and compiles a source's tools.
func compileTools(kind SourceKind, source string, tools []Tool) ([]*entry, error) {
	seen := make(map[string]bool, len(tools))
	entries := make([]*entry, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("toolloop: source %q: nil tool", source)
		}
		spec := t.Spec()
		if !ValidToolName(spec.Name) {
			return nil, fmt.Errorf("toolloop: source %q: invalid tool name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -", source, spec.Name)
		}
		if seen[spec.Name] {
			return nil, fmt.Errorf("%w: source %q has two tools named %q", ErrToolNameTaken, source, spec.Name)
		}
		seen[spec.Name] = true
		if len(spec.InputSchema) == 0 {
			spec.InputSchema = emptyObjectSchema
		}
		schema, err := compileSchema(spec.Name, spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("toolloop: source %q: tool %q: %w", source, spec.Name, err)
		}
		entries = append(entries, &entry{tool: t, spec: spec, schema: schema, fast: compileFast(spec.InputSchema), kind: kind, source: source})
	}
	return entries, nil
}

// checkTaken refuses entries of the source whose names another source
// already has, unless shadowing is allowed. r.mu must be held.
func (r *ToolRegistry) checkTaken(source string, kind SourceKind, entries []*entry) error {
	if r.AllowShadowing {
		return nil
	}
	s := r.snap.Load()
	if s == nil {
		return nil
	}
	for _, e := range entries {
		w, taken := s.byName[e.spec.Name]
		if !taken || w.source == source {
			continue
		}
		return fmt.Errorf("%w: tool %q of %s:%s is already provided by %s:%s; rename one of them, or set ToolRegistry.AllowShadowing to let the %s tool win",
			ErrToolNameTaken, e.spec.Name, kind, source, w.kind, w.source, winnerKind(kind, source, w))
	}
	return nil
}

// winnerKind names the kind whose tool would win a shadowing between a new
// source and an existing tool w.
func winnerKind(kind SourceKind, source string, w *entry) SourceKind {
	if kindRank(kind) < kindRank(w.kind) || source == LocalSource {
		return kind
	}
	return w.kind
}
