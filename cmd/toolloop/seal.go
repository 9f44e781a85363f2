package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/toolloop/toolloop"
)

// A paused run's log is a file the agent's shell can reach (exec_shell is
// not fenced off from .toolloop), so toolloop seals the state the run
// paused with, as the log replays it, with a key of the user's that the
// workspace does not hold (toolloop.PauseState.Seal), and resume refuses a
// paused run whose log no longer replays to what was sealed: a pending
// call's arguments, a call added, the transcript changed.

// sealKeySize is the size of the seal key toolloop makes.
const sealKeySize = 32

// configDir is toolloop's folder in the user's configuration directory:
// $TOOLLOOP_CONFIG_DIR if set, otherwise toolloop in os.UserConfigDir
// ($XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support
// on macOS, %AppData% on Windows).
func configDir(getenv func(string) string) (string, error) {
	if d := getenv("TOOLLOOP_CONFIG_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory to keep the seal key in (set TOOLLOOP_CONFIG_DIR): %w", err)
	}
	return filepath.Join(d, "toolloop"), nil
}

// sealKey returns the user's seal key, seal.key in configDir, making it
// on first use: 32 random bytes in a file only the user may read, in a
// folder only the user may open. Two toolloops making it at once agree
// on one key.
func sealKey(getenv func(string) string) ([]byte, error) {
	dir, err := configDir(getenv)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "seal.key")
	key, err := readSealKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the seal key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".seal.key-*") // 0600
	if err != nil {
		return nil, fmt.Errorf("making the seal key: %w", err)
	}
	defer os.Remove(tmp.Name())
	key = make([]byte, sealKeySize)
	_, _ = rand.Read(key)
	_, err = tmp.Write(key)
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("making the seal key: %w", err)
	}
	// A link, unlike a rename, does not replace a key another toolloop
	// made meanwhile.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("making the seal key: %w", err)
	}
	return readSealKey(path)
}

// readSealKey reads the key at path, refusing one others may read.
func readSealKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the seal key %s may be read by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	key := make([]byte, sealKeySize+1)
	n, _ := f.Read(key)
	if n != sealKeySize {
		return nil, fmt.Errorf("the seal key %s is not %d bytes: remove it to make a new one (runs paused before cannot then be resumed)", path, sealKeySize)
	}
	return key[:n], nil
}

// sealPath is the file that holds the seal of the paused run in log.
func sealPath(log string) string { return log + ".seal" }

// writeSeal seals st with key and writes the seal beside log, replacing
// it whole.
func writeSeal(log string, st *toolloop.PauseState, key []byte) error {
	if err := st.Seal(key); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(log), "."+filepath.Base(log)+".seal-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(st.MAC + "\n")
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), sealPath(log))
}

// removeSeal removes the seal beside log, if there is one.
func removeSeal(log string) error {
	if err := os.Remove(sealPath(log)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// checkSeal puts the seal kept beside log on st, the paused state the log
// replays, and checks it with the user's key: an error that says what is
// wrong if the log was changed since the run paused, or has no seal.
func checkSeal(getenv func(string) string, log string, st *toolloop.PauseState) error {
	key, err := sealKey(getenv)
	if err != nil {
		return err
	}
	mac, err := os.ReadFile(sealPath(log))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("refusing to resume the run paused in %s: it has no seal (%s is missing; a toolloop older than sealing paused it, or the seal was removed), so what it waits on cannot be trusted", log, sealPath(log))
	case err != nil:
		return fmt.Errorf("reading the seal of %s: %w", log, err)
	}
	st.MAC = strings.TrimSpace(string(mac))
	if err := st.Verify(key); err != nil {
		return fmt.Errorf("refusing to resume the run paused in %s: the log was changed after the run paused (a waiting call, its arguments or the transcript differ from what toolloop sealed), or another user's toolloop paused it (%w)", log, err)
	}
	return nil
}
