package discovery

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// logBuffer collects a Session's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Data that decodes as JSON but is not an instance of the service at its
// node is not served: not by queries, not by providers. Each such node is
// reported through the Session's logger. Instances named by a sequence
// suffix, as DynamicSequential registrations are (by zkcoord, protected,
// or by Curator, not), are served.
func TestInstancesThatDoNotMatchTheirNodeAreNotServed(t *testing.T) {
	logs := &logBuffer{}
	sess := connect(t, func(c *zkcoord.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	ctx := testkit.Ctx(t, wait)
	d := newDiscovery(t, sess, "/svc")
	register(t, d, Instance{Name: "web", ID: "ok", Address: "h"})
	register(t, d, Instance{Name: "web", ID: "port-only", Port: 80})
	register(t, d, Instance{Name: "web", ID: "seq", Address: "h", ServiceType: DynamicSequential})
	bad := map[string]string{
		"null":      `null`,
		"foo":       `{"foo":1}`,
		"other-id":  `{"name":"web","id":"x","address":"h","port":1}`,
		"other-svc": `{"name":"api","id":"other-svc","address":"h","port":1}`,
		"no-addr":   `{"name":"web","id":"no-addr","address":null,"port":null,"sslPort":null}`,
		// A sequence suffix only for a DynamicSequential instance.
		"dyn0000000003": `{"name":"web","id":"dyn","address":"h","serviceType":"DYNAMIC"}`,
	}
	for node, data := range bad {
		if _, err := sess.Create(ctx, "/svc/web/"+node, []byte(data), 0); err != nil {
			t.Fatal(err)
		}
	}
	// A sequential instance as Curator writes it: no protected prefix.
	curator := `{"name":"web","id":"cur","address":"h","port":1,"serviceType":"DYNAMIC_SEQUENTIAL"}`
	if _, err := sess.Create(ctx, "/svc/web/cur0000000007", []byte(curator), 0); err != nil {
		t.Fatal(err)
	}

	want := []string{"cur", "ok", "port-only", "seq"}
	got, err := d.Instances(ctx, "web")
	if err != nil || !slices.Equal(ids(got), want) {
		t.Errorf("Instances = %v, %v; want %v", ids(got), err, want)
	}
	for node := range bad {
		if _, err := d.Instance(ctx, "web", node); !errors.Is(err, zkcoord.ErrBadData) {
			t.Errorf("Instance(%s): %v, want ErrBadData", node, err)
		}
	}
	p, err := d.NewProvider(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	if got := ids(served(t, p)); !slices.Equal(got, want) {
		t.Errorf("provider instances %v, want %v", got, want)
	}
	for node := range bad {
		if !strings.Contains(logs.String(), "/svc/web/"+node+" ") {
			t.Errorf("no report of %s in the logs:\n%s", node, logs)
		}
	}
}
