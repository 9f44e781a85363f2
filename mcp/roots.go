//lint:file-ignore SA1019 roots, sampling and logging are deprecated by the protocol of 2026-07-28 but work for at least a year, and servers use them; the issue asks for them.

package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRoots bounds the roots offered to one server.
const MaxRoots = 256

// ErrNoRoots is returned by [Source.SetRoots] for a source that declared
// no roots capability: its server was told the client has no roots, and
// would not ask.
var ErrNoRoots = errors.New("mcp: the source was configured without roots")

// rootURIs turns directories (absolute or relative to the working
// directory) or file:// URIs into file:// URIs, sorted and without
// duplicates.
func rootURIs(dirs []string) ([]string, error) {
	if len(dirs) > MaxRoots {
		return nil, fmt.Errorf("%d roots: at most %d", len(dirs), MaxRoots)
	}
	uris := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if strings.HasPrefix(d, "file://") {
			u, err := url.Parse(d)
			if err != nil || u.Path == "" || !path.IsAbs(u.Path) {
				return nil, fmt.Errorf("root %q is not a file URI with an absolute path", d)
			}
			uris = append(uris, u.String())
			continue
		}
		if d == "" || strings.Contains(d, "://") {
			return nil, fmt.Errorf("root %q is neither a directory nor a file:// URI", d)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("root %q: %v", d, err)
		}
		p := filepath.ToSlash(abs)
		if !strings.HasPrefix(p, "/") {
			p = "/" + p // a Windows drive: file:///C:/dir
		}
		uris = append(uris, (&url.URL{Scheme: "file", Path: p}).String())
	}
	slices.Sort(uris)
	return slices.Compact(uris), nil
}

// sdkRoots names each root after its last path element.
func sdkRoots(uris []string) []*sdk.Root {
	roots := make([]*sdk.Root, len(uris))
	for i, u := range uris {
		name := u
		if p, err := url.Parse(u); err == nil {
			name = path.Base(p.Path)
		}
		roots[i] = &sdk.Root{URI: u, Name: name}
	}
	return roots
}

// Roots returns the roots the source offers its server, as file:// URIs;
// nil if it declared no roots capability.
func (s *Source) Roots() []string {
	s.cl.mu.Lock()
	defer s.cl.mu.Unlock()
	return slices.Clone(s.cl.roots)
}

// SetRoots replaces the roots the source offers its server, given as
// directories (absolute, or relative to the working directory) or file://
// URIs, and tells a connected server that they changed
// (notifications/roots/list_changed), so that it asks for them again;
// a server started later gets them at once. Roots that go away are
// removed before new ones are added, so that the server never sees more
// than the old roots or the new ones. Only a source configured with roots
// ([Options.Roots] or [ServerConfig.Roots], possibly empty but not nil)
// has a roots capability; others return [ErrNoRoots].
func (s *Source) SetRoots(dirs []string) error {
	uris, err := rootURIs(dirs)
	if err != nil {
		return fmt.Errorf("mcp: server %q: %w", s.name, err)
	}
	s.cl.mu.Lock()
	defer s.cl.mu.Unlock()
	if s.cl.roots == nil {
		return ErrNoRoots
	}
	var gone []string
	for _, u := range s.cl.roots {
		if _, found := slices.BinarySearch(uris, u); !found {
			gone = append(gone, u)
		}
	}
	var added []string
	for _, u := range uris {
		if _, found := slices.BinarySearch(s.cl.roots, u); !found {
			added = append(added, u)
		}
	}
	s.client.RemoveRoots(gone...)
	s.client.AddRoots(sdkRoots(added)...)
	s.cl.roots = uris
	return nil
}
