package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a throwaway PostgreSQL cluster: a data directory in a temporary directory and a
// postgres server process listening on 127.0.0.1 (its unix socket stays inside the temporary
// directory).
type Cluster struct {
	dir  string
	dsn  string
	cmd  *exec.Cmd
	exit chan error // receives the server's exit status
	// bin, port and cred start the server again after Halt.
	bin  string
	port int
	cred *syscall.Credential
}

// StartCluster initialises and starts a new cluster from the installed PostgreSQL binaries and
// waits until it accepts connections. When running as root it runs them as the "postgres"
// user, since initdb refuses to run as root. Stop it with Stop.
func StartCluster(ctx context.Context) (*Cluster, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hoist-pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	if err := c.start(ctx, bin); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// DSN is the connection string of the cluster's "postgres" database as the superuser.
func (c *Cluster) DSN() string { return c.dsn }

// Stop shuts the server down (fast shutdown, then SIGKILL if it lingers) and removes the
// cluster's files.
func (c *Cluster) Stop() error {
	err := c.Halt()
	if rerr := os.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	return err
}

// Halt shuts the server down (fast shutdown: sessions are ended, as in an operator's restart)
// and keeps its data; Resume starts it again. Halting a halted cluster does nothing.
func (c *Cluster) Halt() error {
	if c.cmd == nil || c.cmd.Process == nil {
		return nil
	}
	defer func() { c.cmd = nil }()
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exit:
		return nil
	case <-time.After(15 * time.Second):
		c.cmd.Process.Kill()
		<-c.exit
		return errors.New("pgtest: postgres did not shut down in time; killed")
	}
}

// Resume starts a halted cluster again on its data and port and waits until it accepts
// connections.
func (c *Cluster) Resume(ctx context.Context) error {
	if c.cmd != nil {
		return errors.New("pgtest: the cluster is running")
	}
	if err := c.run(c.bin, filepath.Join(c.dir, "data"), c.port, c.cred); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	cred, err := credential(c.dir)
	if err != nil {
		return err
	}
	data := filepath.Join(c.dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Dir, initdb.SysProcAttr = c.dir, &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	c.bin, c.port, c.cred = bin, port, cred
	if err := c.run(bin, data, port, cred); err != nil {
		return err
	}
	c.dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return c.waitReady(ctx)
}

// run starts the postgres server process with settings for throwaway test data.
func (c *Cluster) run(bin, data string, port int, cred *syscall.Credential) error {
	logf, err := os.Create(filepath.Join(c.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-h", "127.0.0.1", "-k", c.dir, "-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300")
	c.cmd.Dir, c.cmd.Stdout, c.cmd.Stderr = c.dir, logf, logf
	// Pdeathsig: if the test binary dies without stopping the cluster, the server dies too.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.exit = make(chan error, 1)
	go func() { c.exit <- c.cmd.Wait() }()
	return nil
}

// waitReady polls the server until it accepts a connection, it exits, or 60 seconds pass.
func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := pgx.Connect(ctx, c.dsn)
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case werr := <-c.exit:
			c.exit <- werr // for Stop
			return fmt.Errorf("pgtest: postgres exited (%v); log:\n%s", werr, c.log())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %v; log:\n%s", err, c.log())
		case <-tick.C:
		}
	}
}

// log returns the server log, for error messages.
func (c *Cluster) log() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	return string(b)
}

// credential returns the credential to run PostgreSQL with: nil normally, the "postgres"
// user's when running as root (and then dir is handed to that user).
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs a \"postgres\" user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// findBinaries returns the directory holding initdb and postgres: the one on PATH, else the
// newest /usr/lib/postgresql/<version>/bin (Debian's layout).
func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(p); exists(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	for _, dir := range slices.Backward(dirs) {
		if exists(filepath.Join(dir, "initdb")) && exists(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", errors.New("pgtest: no PostgreSQL binaries (initdb, postgres) on PATH or in " +
		"/usr/lib/postgresql/*/bin; install PostgreSQL, set " + envDSN + ", or set " + envSkip + "=1")
}

// versionOf returns the major version in a /usr/lib/postgresql/<version>/bin path.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(strings.Split(filepath.Base(filepath.Dir(binDir)), ".")[0])
	return v
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
