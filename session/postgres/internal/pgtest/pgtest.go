// Package pgtest runs a throwaway Postgres cluster for the tests of the
// module: initdb in a temporary folder, a server listening on a Unix
// socket only, with durability off, a fresh database per test, and
// everything removed when the tests end.
//
// The binaries are found on the PATH, else in the newest
// /usr/lib/postgresql/*/bin (where Debian's postgresql package puts
// them). initdb and postgres refuse to run as root: as root, the cluster
// runs as the user postgres, or nobody.
//
// Without the binaries the tests skip, unless TOOLLOOP_POSTGRES_REQUIRED
// is 1, as in CI: then they fail.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequiredEnv, set to 1, makes the tests fail rather than skip when there
// is no Postgres to run.
const RequiredEnv = "TOOLLOOP_POSTGRES_REQUIRED"

// ErrNoPostgres: the Postgres binaries are not on this machine.
var ErrNoPostgres = errors.New("pgtest: no Postgres binaries (initdb, pg_ctl): put them on the PATH or install Debian's postgresql package")

// Cluster is a running throwaway cluster.
type Cluster struct {
	bin   string // the folder of initdb, pg_ctl and postgres
	root  string // the temporary folder: data/, sock/, log
	cred  *syscall.Credential
	n     atomic.Int64
	stop  sync.Once
	admin string // connection string of the postgres database
}

// FindBin returns the folder of initdb and pg_ctl: the one on the PATH,
// else the newest /usr/lib/postgresql/<version>/bin.
func FindBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", ErrNoPostgres
	}
	version := func(d string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64)
		return v
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	return found[0], nil
}

// Start initializes and starts a cluster in a new temporary folder.
func Start() (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "toolloop-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, root: root}
	sock := filepath.Join(root, "sock")
	if err := os.Mkdir(sock, 0o700); err != nil {
		c.cleanup()
		return nil, err
	}
	if os.Geteuid() == 0 {
		if c.cred, err = unprivileged(); err != nil {
			c.cleanup()
			return nil, err
		}
		for _, p := range []string{root, sock} {
			if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
				c.cleanup()
				return nil, err
			}
		}
	}
	data := filepath.Join(root, "data")
	if out, err := c.run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--no-locale"); err != nil {
		c.cleanup()
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	conf := fmt.Sprintf(`
listen_addresses = ''
unix_socket_directories = '%s'
port = 5432
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
`, sock)
	if err := appendFile(filepath.Join(data, "postgresql.conf"), conf); err != nil {
		c.cleanup()
		return nil, err
	}
	if out, err := c.run("pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(root, "log")); err != nil {
		log, _ := os.ReadFile(filepath.Join(root, "log"))
		c.cleanup()
		return nil, fmt.Errorf("pgtest: pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	c.admin = c.connString("postgres")
	return c, nil
}

// unprivileged returns the credential of the user postgres, or nobody.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
		}
	}
	return nil, errors.New("pgtest: running as root, and there is no user postgres or nobody to run Postgres as")
}

func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// run runs one of the cluster's binaries, as the unprivileged user if
// the tests run as root.
func (c *Cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.root
	cmd.Env = []string{"PATH=" + c.bin + ":/usr/bin:/bin", "LC_ALL=C", "HOME=" + c.root}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func (c *Cluster) connString(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", filepath.Join(c.root, "sock"), db)
}

// NewDatabase creates an empty database and returns its connection
// string.
func (c *Cluster) NewDatabase(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, c.admin)
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(context.Background())
	name := fmt.Sprintf("t_%d", c.n.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	return c.connString(name), nil
}

// Stop stops the cluster at once (its data is thrown away) and removes
// its folder.
func (c *Cluster) Stop() error {
	var err error
	c.stop.Do(func() {
		out, e := c.run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", filepath.Join(c.root, "data"))
		if e != nil {
			err = fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", e, out)
		}
		c.cleanup()
	})
	return err
}

func (c *Cluster) cleanup() { os.RemoveAll(c.root) }

// The cluster of this test binary, started by the first test that needs
// it and stopped by StopShared.
var shared struct {
	mu      sync.Mutex
	started bool
	c       *Cluster
	err     error
}

// NewDatabase returns the connection string of a new, empty database on
// this test binary's cluster, starting the cluster first if need be. It
// skips tb when there are no Postgres binaries (fails if RequiredEnv is
// 1), and fails it if the cluster does not start.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	shared.mu.Lock()
	if !shared.started {
		shared.started = true
		shared.c, shared.err = Start()
	}
	c, err := shared.c, shared.err
	shared.mu.Unlock()
	switch {
	case errors.Is(err, ErrNoPostgres) && os.Getenv(RequiredEnv) != "1":
		tb.Skipf("%v (set %s=1 to make this a failure)", err, RequiredEnv)
	case err != nil:
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn, err := c.NewDatabase(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// StopShared stops the cluster NewDatabase started, if it did. Call it in
// TestMain after the tests.
func StopShared() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c == nil {
		return nil
	}
	return shared.c.Stop()
}

// ExecAdmin runs sql on the database dsn names, as the superuser: for
// tests that corrupt a row or set a schema version on purpose.
func ExecAdmin(ctx context.Context, dsn, sql string, args ...any) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, args...)
	return err
}
