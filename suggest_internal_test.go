package toolloop

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosestNames(t *testing.T) {
	names := []string{"github__create_issue", "github__list_issues", "list_dir", "read_file", "read_files", "search", "write_file"}
	tests := []struct {
		query string
		n     int
		want  []string
	}{
		{"read_file", 3, []string{"read_file", "read_files"}}, // exact first, then by distance
		{"read_fil", 3, []string{"read_file", "read_files"}},
		{"write_fil", 3, []string{"write_file"}},
		{"raed_file", 1, []string{"read_file"}},
		{"READ_FILE", 2, []string{"read_file", "read_files"}},
		{"create_issue", 3, []string{"github__create_issue"}},
		{"list_issues", 3, []string{"github__list_issues"}},
		{"file", 3, []string{"read_file", "read_files", "write_file"}}, // contained in: ties keep input order
		{"searchable", 3, []string{"search"}},                          // contains a name
		{"weather", 3, []string{}},
		{"ab", 3, []string{}},
		{"", 3, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			assert.Equal(t, tt.want, closestNames(tt.query, names, tt.n))
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"abc", "abd", 1},
		{"abc", "acb", 2},
		{"kitten", "sitting", 3},
		{"read_file", "raed_file", 2},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, editDistance(tt.a, tt.b), "%q %q", tt.a, tt.b)
		assert.Equal(t, tt.want, editDistance(tt.b, tt.a), "%q %q", tt.b, tt.a)
	}
}
