package toolloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
//
// It is made for thousands of tools: lookups take no lock, Register costs
// the same per tool whether tools come one at a time or all at once, tools
// with identical input schemas share one compiled schema, and a name that
// resolves to nothing is matched against all names for suggestions
// through an index, not one by one.
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
	schemas   schemaCache
	dirty     atomic.Bool
	// snap is what lookups read, without a lock. A change makes a new
	// snapshot; Register's makes it from the last one in time that does
	// not grow with the number of tools.
	snap atomic.Pointer[snapshot]
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
	schema *jsonschema.Schema // shared by the tools whose schemas have key
	fast   *fastSchema        // nil unless the schema is in the fast path's subset
	key    schemaKey
	kind   SourceKind
	source string
}

// snapshot is the registry as lookups see it. Only the table of names is
// made when the registry changes; the sorted specs and the index of names
// for suggestions are made on first use.
type snapshot struct {
	table nameTable
	// shadowed is sorted by name, then by the loser's place in the
	// resolution order.
	shadowed []Shadowing

	viewOnce sync.Once
	specs    []ToolSpec // sorted by name
	names    []string   // the names of specs

	infoOnce sync.Once
	infos    []ToolInfo // sorted by name

	indexOnce sync.Once
	index     *nameIndex // over names
}

// sortedSpecs returns the specs of the tools names resolve to, sorted by
// name.
func (s *snapshot) sortedSpecs() []ToolSpec {
	s.viewOnce.Do(func() {
		es := s.table.appendTo(make([]*entry, 0, s.table.len()))
		slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.spec.Name, b.spec.Name) })
		if len(es) == 0 {
			return
		}
		s.specs = make([]ToolSpec, len(es))
		s.names = make([]string, len(es))
		for i, e := range es {
			s.specs[i], s.names[i] = e.spec, e.spec.Name
		}
	})
	return s.specs
}

// toolInfos returns the tools names resolve to, with their sources,
// sorted by name.
func (s *snapshot) toolInfos() []ToolInfo {
	s.infoOnce.Do(func() {
		es := s.table.appendTo(make([]*entry, 0, s.table.len()))
		if len(es) == 0 {
			return
		}
		slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.spec.Name, b.spec.Name) })
		s.infos = make([]ToolInfo, len(es))
		for i, e := range es {
			s.infos[i] = ToolInfo{ToolSpec: e.spec, Source: e.kind, SourceName: e.source}
		}
	})
	return s.infos
}

func (s *snapshot) nameIndex() *nameIndex {
	s.indexOnce.Do(func() {
		s.sortedSpecs()
		s.index = newNameIndex(s.names)
	})
	return s.index
}

// ValidToolName reports whether name is a tool name every major provider
// accepts: 1 to 64 characters from a-z, A-Z, 0-9, _ and -.
func ValidToolName(name string) bool {
	if len(name) < 1 || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

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
//
// Register takes time for the tools it adds, not for those registered
// before: registering tools one at a time costs no more than in one call,
// and a schema identical to one the registry has already is not compiled
// again.
func (r *ToolRegistry) Register(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var table nameTable
	if s := r.snap.Load(); s != nil {
		table = s.table
	}
	mine := func(name string) bool {
		e := table.get(name)
		return e != nil && e.source == LocalSource && e.kind == SourceLocal
	}
	entries, err := r.schemas.compileTools(SourceLocal, LocalSource, tools, mine)
	if err != nil {
		return err
	}
	if err := r.checkTaken(LocalSource, SourceLocal, entries); err != nil {
		return err
	}
	st := r.find(LocalSource)
	if st == nil {
		st = &sourceState{src: NewSource(LocalSource, SourceLocal), kind: SourceLocal, name: LocalSource, order: -1}
		r.sources = append(r.sources, st)
	}
	st.tools = append(st.tools, entries...)
	r.schemas.commit(entries)
	r.addLocal(entries)
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
	if name == LocalSource {
		return fmt.Errorf("toolloop: source name %q is reserved for Register", name)
	}
	tools, err := src.Tools(ctx)
	if err != nil {
		return fmt.Errorf("toolloop: source %q: listing tools: %w", name, err)
	}
	entries, err := r.schemas.compileTools(kind, name, tools, nil)
	if err != nil {
		return err
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
	r.schemas.commit(entries)
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
				entries[i], err = r.schemas.compileTools(st.kind, st.name, tools, nil)
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
			r.schemas.commit(entries[i])
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
		return s.sortedSpecs()
	}
	return nil
}

// Tools returns every tool the model may call, with its source, sorted by
// name. The slice is shared: do not modify it.
func (r *ToolRegistry) Tools(ctx context.Context) []ToolInfo {
	r.maybeRefresh(ctx)
	if s := r.snap.Load(); s != nil {
		return s.toolInfos()
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
	return s.nameIndex().closest(name, 3)
}

func (r *ToolRegistry) resolve(ctx context.Context, name string) *entry {
	r.maybeRefresh(ctx)
	s := r.snap.Load()
	if s == nil {
		return nil
	}
	return s.table.get(name)
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

// rebuild makes a new snapshot from the sources, and forgets the schemas
// of tools that are gone. r.mu must be held.
func (r *ToolRegistry) rebuild() {
	order := slices.Clone(r.sources)
	slices.SortStableFunc(order, func(a, b *sourceState) int {
		if d := kindRank(a.kind) - kindRank(b.kind); d != 0 {
			return d
		}
		return a.order - b.order
	})
	b := nameTable{}.builder()
	var shadowed []Shadowing
	for _, st := range order {
		for _, e := range st.tools {
			if w := b.t.get(e.spec.Name); w != nil {
				shadowed = append(shadowed, Shadowing{Name: e.spec.Name, Winner: label(w), Loser: label(e)})
				continue
			}
			b.put(e)
		}
	}
	slices.SortStableFunc(shadowed, func(a, b Shadowing) int { return strings.Compare(a.Name, b.Name) })
	var fresh []Shadowing
	if len(shadowed) > 0 {
		before := map[Shadowing]bool{}
		if s := r.snap.Load(); s != nil {
			for _, sh := range s.shadowed {
				before[sh] = true
			}
		}
		for _, sh := range shadowed {
			if !before[sh] {
				fresh = append(fresh, sh)
			}
		}
	}
	r.publish(b.table(), shadowed, fresh)
	r.schemas.sweep(r.sources)
}

// addLocal adds Register's new entries to the snapshot: a put each in the
// table of names, and, for a name that another source's tool had, a
// change to the list of shadowed tools. r.mu must be held.
func (r *ToolRegistry) addLocal(entries []*entry) {
	var table nameTable
	var shadowed []Shadowing
	if s := r.snap.Load(); s != nil {
		table, shadowed = s.table, s.shadowed
	}
	b := table.builder()
	var displaced []*entry
	for _, e := range entries {
		if w := b.put(e); w != nil {
			displaced = append(displaced, w)
		}
	}
	var fresh []Shadowing // all new: the local source had none of these names
	if len(displaced) > 0 {
		shadowed = slices.Clone(shadowed)
		winner := string(SourceLocal) + ":" + LocalSource
		for _, w := range displaced {
			// w loses to the new tool, ahead of the tools that lost to
			// it, which now lose to the new tool too.
			name := w.spec.Name
			lo, _ := slices.BinarySearchFunc(shadowed, name, func(s Shadowing, name string) int { return strings.Compare(s.Name, name) })
			hi := lo
			for hi < len(shadowed) && shadowed[hi].Name == name {
				hi++
			}
			repl := []Shadowing{{Name: name, Winner: winner, Loser: label(w)}}
			for _, sh := range shadowed[lo:hi] {
				repl = append(repl, Shadowing{Name: name, Winner: winner, Loser: sh.Loser})
			}
			shadowed = slices.Replace(shadowed, lo, hi, repl...)
			fresh = append(fresh, repl...)
		}
	}
	r.publish(b.table(), shadowed, fresh)
}

// publish makes the table and shadowed list what lookups see, and logs
// fresh, the shadowings that are new. r.mu must be held.
func (r *ToolRegistry) publish(table nameTable, shadowed, fresh []Shadowing) {
	for _, sh := range fresh {
		level := slog.LevelWarn
		if r.AllowShadowing {
			level = slog.LevelInfo
		}
		r.logger().Log(context.Background(), level, "tool shadowed by an earlier source", "tool", sh.Name, "winner", sh.Winner, "loser", sh.Loser)
	}
	r.snap.Store(&snapshot{table: table, shadowed: shadowed})
}

// label names an entry's source as "kind:name".
func label(e *entry) string { return string(e.kind) + ":" + e.source }

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
		w := s.table.get(e.spec.Name)
		if w == nil || w.source == source {
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
