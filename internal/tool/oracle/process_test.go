package oracle

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/event"
	"github.com/zkcoord/zkcoord/internal/tool/launch"
)

// TestHelperProcess plays a client that acquires and releases resources on
// command, reporting through an Emitter on its standard output.
func TestHelperProcess(t *testing.T) {
	if launch.Role() != "holder" {
		t.Skip("helper process only")
	}
	em := event.NewEmitter(os.Stdout, "")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		verb, res, _ := strings.Cut(sc.Text(), " ")
		switch verb {
		case "acquire":
			em.Emit(event.Event{Kind: event.Acquire, Resource: res})
		case "release":
			em.Emit(event.Event{Kind: event.Release, Resource: res})
		}
		fmt.Println("done", sc.Text())
	}
	os.Exit(0)
}

// waiter hands out the output lines of one process.
type waiter struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

func (w *waiter) add(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
	close(w.more)
	w.more = make(chan struct{})
}

func (w *waiter) wait(t *testing.T, line string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		for i, l := range w.lines {
			if l == line {
				w.lines = w.lines[i+1:]
				w.mu.Unlock()
				return
			}
		}
		more := w.more
		w.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no line %q", line)
		}
	}
}

type client struct {
	p *launch.Proc
	w *waiter
}

func (c client) do(t *testing.T, cmd string) {
	t.Helper()
	if err := c.p.Send(cmd); err != nil {
		t.Fatal(err)
	}
	c.w.wait(t, "done "+cmd)
}

// TestAcrossProcesses: events from several processes, stamped with the
// shared monotonic clock, order correctly; a crash recorded after the kill
// ends the victim's holdings; a real overlap is caught.
func TestAcrossProcesses(t *testing.T) {
	h := &History{}
	g := &launch.Group{}
	t.Cleanup(g.Close)
	start := func(name string) client {
		w := &waiter{more: make(chan struct{})}
		p, err := g.Start(context.Background(), launch.Self(name, "holder"), h.Sink(name, w.add))
		if err != nil {
			t.Fatal(err)
		}
		return client{p, w}
	}
	a, b, c, d := start("a"), start("b"), start("c"), start("d")

	// A clean handoff of r1 from a to b, through a crash of a.
	a.do(t, "acquire r1")
	if err := a.p.Pause(); err != nil {
		t.Fatal(err)
	}
	h.Mark(event.Pause, "a", "")
	if err := a.p.Kill(); err != nil {
		t.Fatal(err)
	}
	h.Add(event.Event{Client: "a", Kind: event.Crash})
	b.do(t, "acquire r1")

	// A real overlap on r2 between c and d.
	c.do(t, "acquire r2")
	d.do(t, "acquire r2")
	c.do(t, "release r2")

	vs := h.CheckExclusive()
	if len(vs) != 1 || vs[0].Resource != "r2" || vs[0].ClientA != "c" || vs[0].ClientB != "d" {
		t.Fatalf("violations: %v\nevents: %v", vs, h.Events())
	}
	want := map[string][]string{"b": {"r1"}, "d": {"r2"}}
	if got := h.Holdings(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Holdings = %v, want %v", got, want)
	}
	if err := CheckBalanced(h.Holdings(), []string{"b", "d"}, []string{"r1", "r2"}); err != nil {
		t.Fatal(err)
	}
}
