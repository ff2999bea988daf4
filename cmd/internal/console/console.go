package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
)

//go:embed static
var static embed.FS

// Options configure a Console.
type Options struct {
	// Root is where the console looks for recipes, "/" by default. It is
	// ignored when Paths is set.
	Root string
	// Paths, if set, are the only places looked at. Each is a path, which
	// is walked like Root, or "<kind>:<path>" for a recipe of a known kind
	// at that path ("barrier:/app/gate": simple barriers are plain nodes
	// and are shown only this way).
	Paths []string
	// Admin enables the admin actions: breaking a lock and adding or
	// removing a rebalancer resource. Without it the console only reads.
	Admin bool
	// Hosts are host names, besides IP addresses and "localhost", that
	// requests may name in their Host header: the names the console is
	// reached by. A request for any other name is refused, so that a web
	// page cannot reach the console by rebinding its own name to the
	// console's address.
	Hosts []string
	// Logger receives warnings and the admin actions; silent if nil.
	Logger *slog.Logger
}

// Console serves the web console of one Session. It is safe for
// concurrent use.
type Console struct {
	sess   *zkcoord.Session
	opts   Options
	log    *slog.Logger
	hub    *hub
	model  *model
	cancel context.CancelFunc
	done   chan struct{}
	status Status
	once   sync.Once
	// stop ends the event streams when the console closes.
	stop chan struct{}
	// key is the admin key, "" when admin actions are not enabled.
	key string
}

// ErrInvalid is wrapped by New's errors for invalid options.
var ErrInvalid = errors.New("console: invalid option")

// New starts following the recipes under opts.Root (or opts.Paths) with
// sess; Close stops it. The Session stays the caller's.
func New(sess *zkcoord.Session, opts Options) (*Console, error) {
	if sess == nil {
		return nil, fmt.Errorf("%w: nil Session", ErrInvalid)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	roots, hints, err := parsePaths(opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := newHub()
	c := &Console{sess: sess, opts: opts, log: log, hub: h, cancel: cancel, done: make(chan struct{}),
		stop: make(chan struct{})}
	if opts.Admin {
		c.key = newAdminKey()
	}
	c.status = Status{Admin: opts.Admin, Roots: append([]string{}, opts.Paths...)}
	if len(opts.Paths) == 0 {
		c.status.Roots = roots
	}
	c.model = newModel(ctx, sess, log, h, roots, hints)
	go func() {
		defer close(c.done)
		c.model.run()
	}()
	return c, nil
}

// parsePaths splits Options into paths to walk and paths of known kinds.
func parsePaths(opts Options) ([]string, map[string]Kind, error) {
	hints := map[string]Kind{}
	if len(opts.Paths) == 0 {
		root := opts.Root
		if root == "" {
			root = "/"
		}
		if err := zkcoord.ValidatePath(root); err != nil {
			return nil, nil, fmt.Errorf("%w: root: %w", ErrInvalid, err)
		}
		return []string{root}, hints, nil
	}
	var roots []string
	for _, p := range opts.Paths {
		kind, path, ok := strings.Cut(p, ":")
		if !ok {
			kind, path = "", p
		}
		if err := zkcoord.ValidatePath(path); err != nil {
			return nil, nil, fmt.Errorf("%w: path %q: %w", ErrInvalid, p, err)
		}
		switch k := Kind(kind); k {
		case "":
			roots = append(roots, path)
		case KindGroup, KindElection, KindMutex, KindRWLock, KindSemaphore, KindQueue,
			KindBarrier, KindDoubleBarrier, KindCounter, KindService, KindMembership:
			hints[path] = k
		default:
			return nil, nil, fmt.Errorf("%w: path %q: unknown kind %q", ErrInvalid, p, kind)
		}
	}
	return roots, hints, nil
}

// Close stops following and ends the event streams; it waits for the
// console's goroutines. The Session is left open.
func (c *Console) Close() {
	c.once.Do(func() {
		close(c.stop)
		c.cancel()
		<-c.done
		c.model.close()
	})
}

// Handler serves the page (/), the state as JSON (/api/state), the live
// updates as server-sent events (/api/events) and, with Options.Admin, the
// admin actions (POST /api/admin/break-lock, /api/admin/resource). It
// refuses requests for a host name it does not serve as (Options.Hosts).
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	page, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(page))
	mux.HandleFunc("GET /api/state", c.serveState)
	mux.HandleFunc("GET /api/events", c.serveEvents)
	mux.HandleFunc("POST /api/admin/break-lock", c.breakLock)
	mux.HandleFunc("POST /api/admin/resource", c.resource)
	return c.guard(mux)
}

// serveState answers with every view and the timeline.
func (c *Console) serveState(w http.ResponseWriter, r *http.Request) {
	views, events := c.hub.snapshot()
	st := c.hub.status(c.status)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Status Status                     `json:"status"`
		Views  map[string]json.RawMessage `json:"views"`
		Events []Event                    `json:"events"`
	}{st, views, events})
}
