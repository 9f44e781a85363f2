//go:build !unix

package builtin

import (
	"io/fs"
	"os"
)

// listDir returns a directory's entries.
func listDir(dir *os.Root) ([]fs.DirEntry, error) {
	f, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}
