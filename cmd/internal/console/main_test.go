package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/cmd/internal/console"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is the ZooKeeper server shared by the package's tests; each test
// works in a chroot of its own.
var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}

// connect opens a Session in the test's chroot.
func connect(t *testing.T) *zkcoord.Session {
	t.Helper()
	return testkit.Connect(t, cluster.Servers())
}

// serve starts a console on sess and serves it; both end with the test.
func serve(t *testing.T, sess *zkcoord.Session, opts console.Options) *httptest.Server {
	t.Helper()
	srv, _ := serveConsole(t, sess, opts)
	return srv
}

// serveConsole is serve that also gives the console, for its admin key.
func serveConsole(t *testing.T, sess *zkcoord.Session, opts console.Options) (*httptest.Server, *console.Console) {
	t.Helper()
	c, err := console.New(sess, opts)
	if err != nil {
		t.Fatalf("console.New: %v", err)
	}
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		c.Close() // ends the event streams first, so that Close below returns
		srv.Close()
	})
	return srv, c
}

// state is what /api/state answers.
type state struct {
	Status console.Status           `json:"status"`
	Views  map[string]*console.View `json:"views"`
	Events []console.Event          `json:"events"`
}

func getState(t *testing.T, srv *httptest.Server) (state, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/state", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return state{}, err
	}
	defer res.Body.Close()
	var st state
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return state{}, err
	}
	return st, nil
}

// waitView waits until the view of path satisfies cond (which returns nil
// when it does) and returns it.
func waitView(t *testing.T, srv *httptest.Server, path string, cond func(*console.View) error) *console.View {
	t.Helper()
	var v *console.View
	testkit.WaitFor(t, 30*time.Second, "view of "+path, func() error {
		st, err := getState(t, srv)
		if err != nil {
			return err
		}
		v = st.Views[path]
		if v == nil {
			return fmt.Errorf("no view (have %d)", len(st.Views))
		}
		if v.Error != "" {
			return fmt.Errorf("view error: %s", v.Error)
		}
		return cond(v)
	})
	return v
}

// standingBy returns the election at path for a second candidate, and a
// channel that receives once that candidate stands by behind the leader.
func standingBy(sess *zkcoord.Session, path, id string) (*election.Election, <-chan struct{}) {
	following := make(chan struct{}, 1)
	events := make(chan election.Event, 64)
	go func() { // until the candidate follows, or ends without following
		for ev := range events {
			switch ev.Type {
			case election.EventFollowing:
				following <- struct{}{}
				return
			case election.EventFailed, election.EventResigned:
				return
			}
		}
	}()
	e, _ := election.New(sess, path, election.WithID(id), election.WithEvents(events))
	return e, following
}
