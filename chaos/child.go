package chaos

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// Child process roles (see ChildMain).
const (
	RoleClient  = "client"
	RoleService = "service"
)

// ChildMain runs a child process of a chaos run and returns its exit status:
// role RoleService is the fenced resource service, role RoleClient a client
// of the workload, role RoleUse the command the zkcoord binary runs in the
// cli workload. A program that passes Options.Spawn a way to start
// itself must call ChildMain when started that way (the chaos command's
// main does it for "chaos client ..." and "chaos service ...").
func ChildMain(role string, args []string) int {
	switch role {
	case RoleService:
		return serviceMain(args)
	case RoleClient:
		return clientMain(args)
	case RoleUse:
		return useMain(args)
	}
	fmt.Fprintf(os.Stderr, "chaos: unknown role %q\n", role)
	return 2
}

// clientFlags is the configuration of a client process.
type clientFlags struct {
	workload    Workload
	name        string
	servers     []string
	socket      string
	root        string
	resources   []string
	timeout     time.Duration
	lostAfter   float64
	useInterval time.Duration
	seed        uint64
	bug         string
	lockDelay   time.Duration
	log         *slog.Logger
}

// clientArgs is the inverse of parseClientFlags.
func clientArgs(f clientFlags, logPath string) []string {
	args := []string{"-workload", string(f.workload), "-name", f.name,
		"-servers", strings.Join(f.servers, ","), "-socket", f.socket, "-root", f.root,
		"-resources", strings.Join(f.resources, ","), "-timeout", f.timeout.String(),
		"-lost-after", fmt.Sprint(f.lostAfter), "-use-interval", f.useInterval.String(),
		"-seed", fmt.Sprint(f.seed)}
	if logPath != "" {
		args = append(args, "-log", logPath)
	}
	if f.bug != "" {
		args = append(args, "-bug", f.bug)
	}
	if f.lockDelay > 0 {
		args = append(args, "-lock-delay", f.lockDelay.String())
	}
	return args
}

func parseClientFlags(args []string) (clientFlags, error) {
	var f clientFlags
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	workload := fs.String("workload", "", "workload")
	fs.StringVar(&f.name, "name", "", "client name")
	servers := fs.String("servers", "", "comma-separated ZooKeeper addresses")
	fs.StringVar(&f.socket, "socket", "", "service socket")
	fs.StringVar(&f.root, "root", "", "root path of the run")
	resources := fs.String("resources", "", "comma-separated resources (elections and locks)")
	fs.DurationVar(&f.timeout, "timeout", 4*time.Second, "session timeout")
	fs.Float64Var(&f.lostAfter, "lost-after", 0, "self-expiry fraction")
	fs.DurationVar(&f.useInterval, "use-interval", 100*time.Millisecond, "time between uses")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of random choices")
	fs.StringVar(&f.bug, "bug", "", "a bug to have")
	fs.DurationVar(&f.lockDelay, "lock-delay", 0, "lock-delay of the locks, elections and barrier takeovers")
	logPath := fs.String("log", "", "log file (default stderr)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	w, err := ParseWorkload(*workload)
	if err != nil {
		return f, err
	}
	f.workload = w
	f.servers = strings.Split(*servers, ",")
	if *resources != "" {
		f.resources = strings.Split(*resources, ",")
	}
	out := os.Stderr
	if *logPath != "" {
		lf, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return f, err
		}
		out = lf
	}
	f.log = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo})).With("client", f.name, "pid", os.Getpid())
	return f, nil
}

// clientApp is what a client process runs.
type clientApp interface {
	// add and remove change the resources (elections and locks; the
	// rebalancer learns them from ZooKeeper).
	add(resource string)
	remove(resource string)
	// stop gives everything up and leaves.
	stop(ctx context.Context) error
	// done is closed if the app ended on its own; err tells why.
	done() <-chan struct{}
	err() error
}

// fail logs msg and prints "client: what: err" on standard error, and
// returns the exit status of a client that failed.
func (f clientFlags) fail(msg, what string, err error) int {
	f.log.Error(msg, "err", err)
	fmt.Fprintf(os.Stderr, "client: %s: %v\n", what, err)
	return 1
}

// clientMain is a client process. It reports Acquire and Release events on
// its standard output, prints "ready" once it has joined, and reads
// commands from its standard input: "add R", "remove R", "stop".
func clientMain(args []string) int {
	f, err := parseClientFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 2
	}
	em := event.NewEmitter(os.Stdout, f.name)
	svc, err := dialService(f.socket, f.name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	defer svc.close()
	cfg := zkcoord.Config{Servers: f.servers, SessionTimeout: f.timeout, LostAfter: f.lostAfter, Logger: f.log}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var app clientApp
	switch {
	case f.workload.rebalance():
		app, err = startRebalance(ctx, f, cfg, em, svc)
	case f.workload == Queue:
		app, err = startQueue(ctx, f, cfg, em, svc)
	case f.workload == Counter:
		app, err = startCounter(ctx, f, cfg, em)
	case f.workload == Discovery:
		app, err = startDiscovery(ctx, f, cfg, em)
	default:
		app, err = startOwner(ctx, f, cfg, em, svc)
	}
	cancel()
	if err != nil {
		return f.fail("start failed", "start", err)
	}
	f.log.Info("ready")
	fmt.Println("ready")

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			verb, arg, _ := strings.Cut(line, " ")
			switch {
			case ok && verb == "add":
				app.add(arg)
				continue
			case ok && verb == "remove":
				app.remove(arg)
				continue
			case ok && verb != "stop":
				f.log.Warn("unknown command", "line", line)
				continue
			}
			f.log.Info("stopping")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			err := app.stop(ctx)
			cancel()
			if err != nil {
				return f.fail("stop failed", "stop", err)
			}
			f.log.Info("stopped")
			fmt.Println("stopped")
			return 0
		case <-app.done():
			return f.fail("ended on its own", "ended", app.err())
		}
	}
}

// seedFor derives a per-client, per-purpose random seed.
func seedFor(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return h.Sum64()
}
