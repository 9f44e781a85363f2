//go:build !unix

package mcp

// catchSIGPIPE does nothing: there is no SIGPIPE.
func catchSIGPIPE() (release func()) { return func() {} }
