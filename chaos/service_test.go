package chaos

import (
	"bufio"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
)

// lines collects what the service writes.
type lines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.buf.String()), "\n")
}

// TestService drives the fenced service over a real Unix socket: newer
// tokens win, stale ones are refused, every decision is an event line, and
// "closed" comes after the last decision of a connection.
func TestService(t *testing.T) {
	out := &lines{}
	svc := newFencedService(out)
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc.serve(c)
			}()
		}
	}()
	defer func() {
		ln.Close()
		wg.Wait()
	}()

	a, err := dialService(sock, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := dialService(sock, "b")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		c     *serviceConn
		res   string
		token int64
		ok    bool
	}{
		{a, "r1", 5, true}, {a, "r1", 5, true}, {b, "r1", 7, true}, {a, "r1", 5, false},
		{b, "r1", 7, true}, {a, "r2", 1, true}, {b, "r1", 6, false},
	}
	for i, s := range steps {
		err := s.c.use(s.res, s.token)
		if (err == nil) != s.ok || (err != nil && !errors.Is(err, errStale)) {
			t.Fatalf("step %d: use(%s, %d) = %v, want ok=%v", i, s.res, s.token, err, s.ok)
		}
	}
	if _, err := a.request("use r1 notanumber"); err == nil {
		t.Fatal("bad token accepted")
	}
	a.close()
	b.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := out.all()
		if n := len(got); n > 0 && strings.HasPrefix(got[n-1], "closed ") && strings.Count(strings.Join(got, "\n"), "closed ") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no closed lines: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var kinds []string
	var last int64
	for _, l := range out.all() {
		e, err := event.ParseLine(l)
		if errors.Is(err, event.ErrNotEvent) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.At < last {
			t.Fatalf("event times go backwards: %v", e)
		}
		last = e.At
		kinds = append(kinds, string(e.Kind)+" "+e.Client)
	}
	want := "use a,use a,use b,reject a,use b,use a,reject b"
	if got := strings.Join(kinds, ","); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	sc := bufio.NewScanner(strings.NewReader(strings.Join(out.all(), "\n")))
	hellos := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "hello ") {
			hellos++
		}
	}
	if hellos != 2 {
		t.Fatalf("%d hello lines", hellos)
	}
}
