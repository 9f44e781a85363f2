//go:build !unix

package mcp

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

func killGroup(int) {}

func terminateGroup(int) {}
