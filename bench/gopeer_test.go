//go:build bench

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/failover"
	"github.com/zkcoord/zkcoord/internal/fifo"
	"github.com/zkcoord/zkcoord/lock"
	"github.com/zkcoord/zkcoord/rebalance"
)

// goPeerEnv carries the connect string to a test binary re-executed as
// the zkcoord peer of the crash suites: a process of its own, which the
// driver kills, speaking the protocol of bench/peers.
const goPeerEnv = "ZKBENCH_GOPEER"

// TestGoPeer runs only in a re-executed test binary.
func TestGoPeer(t *testing.T) {
	connect := os.Getenv(goPeerEnv)
	if connect == "" {
		t.Skip("runs only as the zkcoord peer of the crash suites")
	}
	p := &goPeer{servers: strings.Split(connect, ","), acted: make(chan struct{})}
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		args := map[string]string{}
		for _, kv := range f[1:] {
			if k, v, ok := strings.Cut(kv, "="); ok {
				args[k] = v
			}
		}
		r, err := p.run(f[0], args)
		if err != nil {
			fmt.Printf("err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		b, _ := json.Marshal(r)
		fmt.Printf("ok %s\n", b)
	}
}

// goPeer is one crash participant: a zkcoord candidate, failover
// instance, lock contender or rebalancing member with a Session of its own.
type goPeer struct {
	servers []string

	mu       sync.Mutex
	acted    chan struct{} // closed when the participant acts
	at       time.Time     // when it acted
	notified time.Time     // election: the notification that made it look
	held     int           // rebalance: resources held
	err      error
}

func (p *goPeer) act(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.at.IsZero() {
		p.at = at
		close(p.acted)
	}
}

func (p *goPeer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil && p.at.IsZero() {
		p.err = err
		close(p.acted)
	}
}

func (p *goPeer) run(cmd string, a map[string]string) (peerReply, error) {
	switch cmd {
	case "crash_join":
		sessMS, err := strconv.Atoi(a["session_ms"])
		if err != nil {
			return peerReply{}, fmt.Errorf("session_ms: %w", err)
		}
		return peerReply{}, p.join(a["kind"], a["path"], time.Duration(sessMS)*time.Millisecond)
	case "crash_await":
		select {
		case <-p.acted:
		case <-time.After(10 * time.Minute):
			return peerReply{}, errors.New("did not act within 10 minutes")
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.err != nil {
			return peerReply{}, p.err
		}
		extra := map[string]float64{"at_us": float64(p.at.UnixMicro())}
		if !p.notified.IsZero() {
			extra["notified_us"] = float64(p.notified.UnixMicro())
		}
		return peerReply{Extra: extra}, nil
	case "crash_held":
		p.mu.Lock()
		defer p.mu.Unlock()
		return peerReply{Extra: map[string]float64{"held": float64(p.held)}}, nil
	}
	return peerReply{}, fmt.Errorf("unknown command %s", cmd)
}

// join connects and starts the participant in the background.
func (p *goPeer) join(kind, path string, timeout time.Duration) error {
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sess, err := zkcoord.Connect(cctx, zkcoord.Config{Servers: p.servers, SessionTimeout: timeout})
	if err != nil {
		return err
	}
	switch kind {
	case "election":
		// The events are read for as long as the peer's process lives.
		events, _ := fifo.Relay(64, func(ev election.Event) {
			if ev.Type == election.EventDetermine && ev.Notified {
				p.mu.Lock()
				p.notified = ev.At
				p.mu.Unlock()
			}
		})
		el, err := election.New(sess, path, election.WithEvents(events))
		if err != nil {
			return err
		}
		go func() {
			if _, err := el.Campaign(ctx); err != nil {
				p.fail(err)
				return
			}
			p.act(time.Now())
		}()
	case "failover":
		f, err := failover.New(sess, path, func(context.Context, failover.Breadcrumb) error {
			return nil // the previous instance's process is dead already
		})
		if err != nil {
			return err
		}
		go func() {
			err := f.Run(ctx, func(ctx context.Context, _ failover.Activation) error {
				p.act(time.Now())
				<-ctx.Done()
				return nil
			})
			p.fail(fmt.Errorf("failover ended: %v", err))
		}()
	case "lock":
		m, err := lock.NewMutex(sess, path)
		if err != nil {
			return err
		}
		go func() {
			if _, err := m.Lock(ctx); err != nil {
				p.fail(err)
				return
			}
			p.act(time.Now())
		}()
	case "rebalance":
		group, root, _ := strings.Cut(path, "@")
		h := rebalance.Handler{
			Assigned: func(context.Context, rebalance.Assignment) error {
				p.mu.Lock()
				p.held++
				p.mu.Unlock()
				p.act(time.Now())
				return nil
			},
			Unassigned: func(rebalance.Assignment, error) error {
				p.mu.Lock()
				p.held--
				p.mu.Unlock()
				return nil
			},
		}
		if _, err := rebalance.Start(ctx, sess, zkcoord.Join(root, group), h, rebalance.WithMinInterval(0)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	return nil
}
