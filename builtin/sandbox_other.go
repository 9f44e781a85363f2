//go:build !linux && !darwin

package builtin

import "os/exec"

// platform is never built here: this platform has no sandbox the package
// can use.
type platform struct{}

// newPlatform reports that commands run unconfined.
func newPlatform(*sandboxPaths, *Sandbox) (*platform, Confinement, error) {
	return nil, Confinement{Summary: "Commands run unconfined, because the package has no sandbox for this operating system: they can read, change and delete anything the user running the agent can, and use the network."}, nil
}

func (*platform) start(cmd *exec.Cmd, _ ResourceLimits) (func() error, error) {
	return startUnconfined(cmd, ResourceLimits{})
}
func (*platform) limits(ResourceLimits) ResourceLimits { return ResourceLimits{} }
func (*platform) command(argv []string) []string       { return argv }
func (*platform) close() error                         { return nil }
