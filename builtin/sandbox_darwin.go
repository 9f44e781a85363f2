//go:build darwin

package builtin

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// On macOS, commands run under sandbox-exec with a Seatbelt profile that
// allows everything but writes outside the writable paths, reads of the
// contents of the unreadable paths, and the network. Paths reach the
// profile as parameters (-D), never spliced into its text.

const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltWorks reports whether sandbox-exec can run a program here (it
// cannot inside another sandbox).
var seatbeltWorks = sync.OnceValue(func() bool {
	return exec.Command(sandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").Run() == nil
})

// platform is the macOS sandbox of a workspace: the sandbox-exec
// arguments that precede each command.
type platform struct {
	prefix []string
}

func newPlatform(p *sandboxPaths, o *Sandbox) (*platform, Confinement, error) {
	if !seatbeltWorks() {
		return nil, Confinement{Summary: "Commands run unconfined, because sandbox-exec does not work here: they can read, change and delete anything the user running the agent can, and use the network."}, nil
	}
	var params []string
	param := func(kind string, i int, path string) string {
		name := fmt.Sprintf("%s%d", kind, i)
		params = append(params, "-D", name+"="+path)
		return fmt.Sprintf(`(subpath (param %q))`, name)
	}
	var w, r, u []string
	for i, d := range p.writable {
		w = append(w, param("W", i, d))
	}
	for i, d := range p.readable {
		r = append(r, param("R", i, d))
	}
	for i, d := range p.unreadable {
		u = append(u, param("U", i, d))
	}
	profile := "(version 1)\n(allow default)\n" +
		"(deny file-write*)\n" +
		`(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") ` + strings.Join(w, " ") + ")\n"
	if len(u) > 0 {
		// Later rules win: deny the unreadable folders, then allow back
		// the workspace and the Writable and Readable paths.
		profile += "(deny file-read-data " + strings.Join(u, " ") + ")\n" +
			"(allow file-read-data " + strings.Join(append(w, r...), " ") + ")\n"
	}
	if !o.AllowNetwork {
		profile += "(deny network*)\n(allow network* (remote unix-socket))\n"
	}
	s := "Commands run in a sandbox (macOS Seatbelt). They can create, change and delete files only in the workspace and in $HOME and $TMPDIR (private folders kept for this session)"
	if extra := p.writable[3:]; len(extra) > 0 {
		s += " and in " + strings.Join(extra, ", ")
	}
	s += "; they cannot read files in users' home folders"
	if len(p.readable) > 0 {
		s += " (but can read " + strings.Join(p.readable, ", ") + ")"
	}
	if o.AllowNetwork {
		s += "; they may use the network."
	} else {
		s += "; they have no network, localhost included."
	}
	pl := &platform{prefix: append([]string{sandboxExec, "-p", profile}, params...)}
	return pl, Confinement{Mechanism: "seatbelt", Writes: true, Reads: true, NetworkOff: !o.AllowNetwork, Summary: s}, nil
}

func (pl *platform) start(cmd *exec.Cmd, _ ResourceLimits) (func() error, error) {
	return startUnconfined(cmd, ResourceLimits{})
}

// limits returns none: the package sets resource limits on Linux only.
func (pl *platform) limits(ResourceLimits) ResourceLimits { return ResourceLimits{} }

// command returns argv run by sandbox-exec.
func (pl *platform) command(argv []string) []string {
	return append(append([]string(nil), pl.prefix...), argv...)
}

func (pl *platform) close() error { return nil }
