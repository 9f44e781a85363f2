package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/toolloop/toolloop"
)

// Servers is the sources of a [Config]: one [Source] per enabled server,
// in name order.
type Servers struct {
	sources []*Source
}

// NewServers returns a source for every server of cfg that is not
// Disabled. It starts nothing (see [Servers.Register]).
func NewServers(cfg *Config, opts *Options) (*Servers, error) {
	ss := &Servers{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		sc := cfg.Servers[name]
		if sc.Disabled {
			continue
		}
		src, err := New(name, sc, opts)
		if err != nil {
			return nil, err
		}
		ss.sources = append(ss.sources, src)
	}
	return ss, nil
}

// Sources returns the sources, in name order.
func (ss *Servers) Sources() []*Source { return slices.Clone(ss.sources) }

// Source returns the source of the named server, or nil.
func (ss *Servers) Source(name string) *Source {
	for _, s := range ss.sources {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Register adds every source to reg, starting the servers that are not
// lazy, in parallel. A server that fails to start or to list its tools is
// left out, and its error is returned, joined with the others; the other
// servers are added all the same.
func (ss *Servers) Register(ctx context.Context, reg *toolloop.ToolRegistry) error {
	// Start the servers in parallel, then add them in name order, so that
	// the registry's order does not depend on which started first.
	errs := make([]error, len(ss.sources))
	var wg sync.WaitGroup
	for i, s := range ss.sources {
		wg.Go(func() { _, errs[i] = s.Tools(ctx) })
	}
	wg.Wait()
	for i, s := range ss.sources {
		if errs[i] != nil {
			continue
		}
		errs[i] = reg.AddSource(ctx, s)
	}
	return errors.Join(errs...)
}

// Close closes every source, in parallel, and returns their errors joined.
func (ss *Servers) Close() error {
	errs := make([]error, len(ss.sources))
	var wg sync.WaitGroup
	for i, s := range ss.sources {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// SetRoots changes the workspace roots of every server that takes them
// from [Options.Roots], as [Source.SetRoots] does for one: servers with
// roots of their own ([ServerConfig].Roots) and servers with no roots
// capability are left as they are. It is how a program whose workspace
// moves tells all its servers at once. A bad directory changes nothing
// and is returned.
func (ss *Servers) SetRoots(dirs []string) error {
	if _, err := rootURIs(dirs); err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	var errs []error
	for _, s := range ss.sources {
		if s.cfg.Roots != nil {
			continue
		}
		if err := s.SetRoots(dirs); err != nil && !errors.Is(err, ErrNoRoots) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
