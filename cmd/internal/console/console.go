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

// Console serves the web console of a Session, and of the next one after
// Resume. It is safe for concurrent use.
type Console struct {
	opts   Options
	log    *slog.Logger
	hub    *hub
	roots  []string
	hints  map[string]Kind
	status Status
	once   sync.Once
	// stop ends the event streams when the console closes.
	stop chan struct{}
	// key is the admin key, "" when admin actions are not enabled.
	key string

	mu     sync.Mutex
	sess   *zkcoord.Session // the Session followed now
	follow *following       // the model following it
	closed bool
}

// following is a model at work on one Session.
type following struct {
	model  *model
	cancel context.CancelFunc
	done   chan struct{}
}

// end stops the model and waits for its goroutines.
func (f *following) end() {
	f.cancel()
	<-f.done
	f.model.close()
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
	c := &Console{opts: opts, log: log, hub: newHub(), roots: roots, hints: hints, stop: make(chan struct{}), sess: sess}
	if opts.Admin {
		c.key = newAdminKey()
	}
	c.status = Status{Admin: opts.Admin, Roots: append([]string{}, opts.Paths...)}
	if len(opts.Paths) == 0 {
		c.status.Roots = roots
	}
	c.follow = c.start(sess, nil)
	return c, nil
}

// start starts a model on sess that takes over the recipes of a previous
// one (nil for none).
func (c *Console) start(sess *zkcoord.Session, recipes map[string]*recipe) *following {
	ctx, cancel := context.WithCancel(context.Background())
	m := newModel(ctx, sess, c.log, c.hub, c.roots, c.hints, recipes)
	f := &following{model: m, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		m.run()
	}()
	return f
}

// Resume carries the console on with sess, typically a new Session after
// the one it followed was lost or expired. The page goes on showing what it
// showed, the event streams stay open, and whatever differs on sess is
// published as it would have been had it changed under the console's eyes,
// on the timeline too. The previous Session stays the caller's. After
// Close, Resume does nothing.
func (c *Console) Resume(sess *zkcoord.Session) error {
	if sess == nil {
		return fmt.Errorf("%w: nil Session", ErrInvalid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.follow.end()
	c.hub.resume()
	c.sess, c.follow = sess, c.start(sess, c.follow.model.recipes)
	return nil
}

// session returns the Session followed now.
func (c *Console) session() *zkcoord.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
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
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closed = true
		c.follow.end()
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
