package main

import (
	"errors"
	"flag"
	"fmt"
)

var (
	// errHelp: -h was asked for and the usage printed (exit 0).
	errHelp = errors.New("help requested")
	// errFlag: the flag package printed a bad flag and the usage (exit 2).
	errFlag = errors.New("bad flag")
)

// newFlagSet returns a flag set that prints its problems and usage to
// stderr and never exits.
func newFlagSet(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("toolloop "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fs.Output().Write([]byte("Usage: toolloop " + name + " " + usage + "\n\nFlags:\n"))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with flags and positional arguments in any order
// ("test run.jsonl -o x.json" as well as "test -o x.json run.jsonl"), and
// returns the positional ones. After "--" every argument is positional.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, errFlag
		}
		rest := fs.Args()
		if start := len(args) - len(rest); start > 0 && args[start-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// withNotes adds notes after the flags in fs's usage.
func withNotes(fs *flag.FlagSet, notes string) {
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\n"+notes)
	}
}
