package mcp

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolloop/toolloop"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "github__create_issue"},
		{"fs", "read-file", "fs__read-file"},
		{"fs", "files.read", "fs__files_read"},
		{"my server", "get/sum", "my_server__get_sum"},
		{"srv", "héllo", "srv__h_llo"},
		{"srv", long, "srv__" + long[:59]},
	}
	for _, tt := range tests {
		got := ToolName(tt.server, tt.tool)
		assert.Equal(t, tt.want, got)
		assert.True(t, toolloop.ValidToolName(got), got)
	}
}

func TestAssignNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		name  string
		tools []string
		want  map[string]string
	}{
		{
			name:  "no clash",
			tools: []string{"echo", "get.sum"},
			want:  map[string]string{"echo": "s__echo", "get.sum": "s__get_sum"},
		},
		{
			name:  "faithful name wins",
			tools: []string{"get.sum", "get_sum", "get sum"},
			want: map[string]string{
				"get_sum": "s__get_sum",
				"get sum": withHash("s__get_sum", "get sum"),
				"get.sum": withHash("s__get_sum", "get.sum"),
			},
		},
		{
			name:  "cut names",
			tools: []string{long + "1", long + "2"},
			want: map[string]string{
				long + "1": ("s__" + long)[:64],
				long + "2": withHash(("s__" + long)[:64], long+"2"),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assignNames("s", tt.tools)
			assert.Equal(t, tt.want, got)
			// The order of the listing does not matter.
			rev := slices.Clone(tt.tools)
			slices.Reverse(rev)
			assert.Equal(t, got, assignNames("s", rev))
			seen := map[string]bool{}
			for _, n := range got {
				assert.True(t, toolloop.ValidToolName(n), n)
				assert.False(t, seen[n], "duplicate %s", n)
				seen[n] = true
			}
		})
	}
}

func TestAssignNamesNeverCollide(t *testing.T) {
	// Many tools that all sanitize to the same name.
	var tools []string
	for _, c := range "!@#$%^&*()+=[]{};:'\",.<>/?`~ " {
		tools = append(tools, "t"+string(c))
	}
	got := assignNames("s", tools)
	seen := map[string]bool{}
	for _, n := range got {
		assert.True(t, toolloop.ValidToolName(n), n)
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
	assert.Len(t, seen, len(tools))
}

func FuzzAssignNames(f *testing.F) {
	f.Add("srv", "a.b", "a_b")
	f.Add("my server", "x/y", "x y")
	f.Fuzz(func(t *testing.T, server, a, b string) {
		if server == "" || a == b {
			return
		}
		got := assignNames(server, []string{a, b})
		if got[a] == got[b] {
			t.Fatalf("%q and %q both named %q", a, b, got[a])
		}
		for _, n := range got {
			if !toolloop.ValidToolName(n) {
				t.Fatalf("invalid name %q", n)
			}
		}
	})
}
