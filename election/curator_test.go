package election_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

// curatorPeer drives Curator LeaderLatch participants in one JVM.
type curatorPeer struct {
	t    *testing.T
	ctx  context.Context
	proc *interop.Proc
}

func (p *curatorPeer) send(line string) {
	p.t.Helper()
	if err := p.proc.Send(line); err != nil {
		p.t.Fatal(err)
	}
}

func (p *curatorPeer) expect(prefix string) string {
	p.t.Helper()
	line, err := p.proc.Expect(p.ctx, prefix)
	if err != nil {
		p.t.Fatal(err)
	}
	return line
}

// start starts participant id and returns its node's path.
func (p *curatorPeer) start(id string) string {
	p.t.Helper()
	p.send("start " + id)
	f := strings.Fields(p.expect("STARTED " + id + " "))
	return f[2]
}

// leader asks participant asker whom it sees as leader, and whether it
// leads itself.
func (p *curatorPeer) leader(asker string) (string, bool) {
	p.t.Helper()
	p.send("leader " + asker)
	f := strings.Fields(p.expect("LEADER " + asker + " "))
	return f[2], f[3] == "true"
}

// TestCuratorInterop: Curator LeaderLatch participants and zkcoord
// candidates share one election path and agree on the leader through
// graceful failovers and a crash of the JVM, and a value a zkcoord
// leader proclaims changes nothing for Curator. A node whose sequence number
// wrapped negative sorts first for Curator, which queues behind it, while
// zkcoord refuses to stand beside it.
func TestCuratorInterop(t *testing.T) {
	ctx := testCtx(t, 2*long)
	prog := interop.CompileJava(t, "testdata/LatchPeer.java")
	path := uniquePath(t)
	sess := connect(t, shared.Servers())
	admin := connect(t, shared.Servers())
	proc := prog.Start(t, shared.ConnectString(), path, "4000")
	java := &curatorPeer{t: t, ctx: ctx, proc: proc}
	java.expect("READY")

	// A node whose sequence number wrapped sorts first for Curator: its
	// participants queue behind it. A zkcoord candidate refuses, with
	// ErrSequenceWrapped, and leaves no node behind.
	wrapped := path + "/_c_9d5a8c3e-1b2f-4c6d-8e7f-0a1b2c3d4e5f-latch--2147483648"
	if err := admin.EnsurePath(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(ctx, wrapped, []byte("wrapped"), zkcoord.FlagEphemeral); err != nil {
		t.Fatal(err)
	}
	j1 := java.start("j1")
	if c, err := newElection(t, sess, path, election.WithID("g0")).Nominate(ctx); err == nil {
		t.Fatalf("a zkcoord candidate stood beside the wrapped node: %+v", c.State())
	} else {
		checkWrapped(t, err, path, wrapped)
	}
	checkParticipants(t, admin, path, wrapped, j1)
	observer := newElection(t, admin, path)
	var g1, g2 *election.Candidate

	// agree checks that the Curator participants still running, the
	// zkcoord candidates and an observer all name the same leader.
	agree := func(want string, javaIDs ...string) {
		t.Helper()
		testkit.Eventually(t, long, "agreement on "+want, func() bool {
			who, err := observer.Leader(ctx)
			return err == nil && who.ID == want
		})
		for _, id := range javaIDs {
			var got string
			var has bool
			testkit.Eventually(t, long, id+" sees "+want, func() bool {
				got, has = java.leader(id)
				return got == want && has == (id == want)
			})
		}
		for _, g := range []*election.Candidate{g1, g2} {
			if g == nil || g.Role() == election.Finished {
				continue
			}
			if (g.Role() == election.Leading) != (g.ID() == want) {
				t.Fatalf("%s has role %v while %s leads", g.ID(), g.Role(), want)
			}
		}
	}

	agree("wrapped", "j1")
	if err := admin.Delete(ctx, wrapped, -1); err != nil {
		t.Fatal(err)
	}
	java.expect("ISLEADER j1")
	agree("j1", "j1")
	if who, _ := observer.Leader(ctx); who.Acting {
		t.Fatalf("a Curator leader is reported as acting: %+v", who)
	}

	var err error
	g1, err = newElection(t, sess, path, election.WithID("g1")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	j2 := java.start("j2")
	g2, err = newElection(t, sess, path, election.WithID("g2")).Nominate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("participants: %s, %s, %s, %s", j1, g1.Node(), j2, g2.Node())
	agree("j1", "j1", "j2")
	if g1.State().Following != j1 || g2.State().Following != j2 {
		t.Fatalf("g1 follows %s, g2 follows %s", g1.State().Following, g2.State().Following)
	}

	// Curator hands over to zkcoord.
	java.send("close j1")
	java.expect("CLOSED j1")
	waitClosed(t, g1.Elected(), long, "g1 elected after j1 closed")
	agree("g1", "j2")
	if who, _ := observer.Leader(ctx); !who.Acting || who.Node != g1.Node() {
		t.Fatalf("zkcoord leader not acting: %+v", who)
	}
	// A value proclaimed by the zkcoord leader is seen beside it, and
	// Curator, which reads the participant nodes, still names it.
	if err := g1.Leadership().Proclaim(ctx, "g1.example:80"); err != nil {
		t.Fatal(err)
	}
	agree("g1", "j2")
	if who, _ := observer.Leader(ctx); who.Value != "g1.example:80" {
		t.Fatalf("observer reads %+v, want the value proclaimed", who)
	}

	// zkcoord hands over to Curator.
	if err := g1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	java.expect("ISLEADER j2")
	agree("j2", "j2")
	if who, _ := observer.Leader(ctx); who.Value != "" || who.Acting {
		t.Fatalf("a Curator leader is reported with a value, or acting: %+v", who)
	}
	if g2.State().Following != j2 {
		t.Fatalf("g2 follows %s", g2.State().Following)
	}

	// The JVM dies; its session expires and zkcoord takes over.
	proc.Kill()
	waitClosed(t, g2.Elected(), long, "g2 elected after the JVM was killed")
	agree("g2")
	if err := g2.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
