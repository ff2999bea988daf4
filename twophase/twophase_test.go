package twophase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

type result struct {
	o   Outcome
	err error
}

func outcomeOf(ctx context.Context, f func(context.Context) (Outcome, error)) <-chan result {
	ch := make(chan result, 1)
	go func() {
		o, err := f(ctx)
		ch <- result{o, err}
	}()
	return ch
}

func want(t *testing.T, name string, ch <-chan result, commit bool, reason string) {
	t.Helper()
	r := <-ch
	if r.err != nil {
		t.Fatalf("%s: Outcome: %v", name, r.err)
	}
	if r.o.Commit != commit || !strings.Contains(r.o.Reason, reason) {
		t.Fatalf("%s: Outcome = %v; want commit=%v with reason %q", name, r.o, commit, reason)
	}
}

// join joins every site in its own session.
func join(t *testing.T, ctx context.Context, path string, sites []string, opts ...Option) (map[string]*Participant, map[string]*zkcoord.Session) {
	t.Helper()
	ps := map[string]*Participant{}
	ss := map[string]*zkcoord.Session{}
	for _, s := range sites {
		sess := connect(t)
		p, err := Join(ctx, sess, path, s, opts...)
		if err != nil {
			t.Fatalf("Join(%s): %v", s, err)
		}
		ps[s], ss[s] = p, sess
	}
	return ps, ss
}

func TestAllVoteCommit(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sites := []string{"db", "cache", "search"}
	coord, err := Begin(ctx, connect(t), "/tx/1", sites, WithPayload([]byte("move 10 EUR")))
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := join(t, ctx, coord.Path(), sites)
	co := outcomeOf(ctx, coord.Outcome)
	var waits []<-chan result
	for _, s := range sites {
		p := ps[s]
		if string(p.Payload()) != "move 10 EUR" {
			t.Fatalf("payload = %q", p.Payload())
		}
		waits = append(waits, outcomeOf(ctx, p.Outcome))
		if err := p.Vote(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	want(t, "coordinator", co, true, "")
	for i, w := range waits {
		want(t, sites[i], w, true, "")
	}
	// Nobody decided before the last vote: the decision was written, once,
	// after every vote.
	obs := connect(t)
	_, dst, err := obs.Get(ctx, tx(coord.Path()).decision())
	if err != nil {
		t.Fatal(err)
	}
	if dst.Version != 1 {
		t.Errorf("decision written %d times; want once", dst.Version)
	}
	for _, s := range sites {
		_, vst, err := obs.Get(ctx, tx(coord.Path()).vote(s))
		if err != nil {
			t.Fatal(err)
		}
		if dst.Mzxid <= vst.Mzxid {
			t.Errorf("decision (zxid %d) written before site %s voted (zxid %d)", dst.Mzxid, s, vst.Mzxid)
		}
	}
	if o, ok, err := Lookup(ctx, connect(t), coord.Path()); err != nil || !ok || !o.Commit {
		t.Fatalf("Lookup = %v, %v, %v", o, ok, err)
	}
	if err := ps["db"].Vote(ctx, false); !errors.Is(err, ErrVoted) {
		t.Fatalf("second Vote = %v; want ErrVoted", err)
	}
	if err := Remove(ctx, connect(t), coord.Path()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Lookup(ctx, connect(t), coord.Path()); !errors.Is(err, ErrNoTransaction) {
		t.Fatalf("Lookup after Remove = %v; want ErrNoTransaction", err)
	}
}

// One abort vote decides at once, even before the coordinator looks.
func TestOneVoteAborts(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sites := []string{"a", "b", "c"}
	coord, err := Begin(ctx, connect(t), "/tx", sites)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := join(t, ctx, coord.Path(), sites)
	wa := outcomeOf(ctx, ps["a"].Outcome)
	if err := ps["a"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := ps["b"].Vote(ctx, false); err != nil {
		t.Fatal(err)
	}
	want(t, "a", wa, false, "site b voted abort")
	want(t, "coordinator", outcomeOf(ctx, coord.Outcome), false, "site b voted abort")
	// c has not voted; it learns the outcome all the same.
	want(t, "c", outcomeOf(ctx, ps["c"].Outcome), false, "site b voted abort")
}

// A site whose session the server expires aborts the transaction, even
// after it voted commit.
func TestExpiredSiteAborts(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sites := []string{"a", "b", "c"}
	coord, err := Begin(ctx, connect(t), "/tx", sites)
	if err != nil {
		t.Fatal(err)
	}
	ps, ss := join(t, ctx, coord.Path(), sites)
	co := outcomeOf(ctx, coord.Outcome)
	wa := outcomeOf(ctx, ps["a"].Outcome)
	if err := ps["b"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := cluster.ExpireSession(ctx, ss["b"].ID(), ss["b"].Password()); err != nil {
		t.Fatal(err)
	}
	want(t, "coordinator", co, false, "site b vanished")
	want(t, "a", wa, false, "site b vanished")
	// Votes after the decision change nothing.
	if err := ps["a"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := ps["c"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	o, ok, err := Lookup(ctx, connect(t), coord.Path())
	if err != nil || !ok || o.Commit {
		t.Fatalf("Lookup = %v, %v, %v; want abort", o, ok, err)
	}
}

// With the coordinator gone before deciding, waiting sites abort.
func TestCoordinatorVanishes(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sites := []string{"a", "b"}
	csess := connect(t)
	coord, err := Begin(ctx, csess, "/tx", sites)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := join(t, ctx, coord.Path(), sites)
	wa := outcomeOf(ctx, ps["a"].Outcome)
	if err := ps["a"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	csess.Close(ctx)
	want(t, "a", wa, false, "coordinator vanished")
	want(t, "b", outcomeOf(ctx, ps["b"].Outcome), false, "coordinator vanished")
}

// Sites that decide for themselves commit without the coordinator.
func TestSitesDecideWithoutCoordinator(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sites := []string{"a", "b", "c"}
	csess := connect(t)
	coord, err := Begin(ctx, csess, "/tx", sites)
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := join(t, ctx, coord.Path(), sites, WithSitesDecide())
	csess.Close(ctx) // the coordinator is gone for good
	var waits []<-chan result
	for _, s := range sites {
		waits = append(waits, outcomeOf(ctx, ps[s].Outcome))
		if err := ps[s].Vote(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	for i, w := range waits {
		want(t, sites[i], w, true, "")
	}
}

func TestCloseBeforeDecisionAborts(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	coord, err := Begin(ctx, connect(t), "/tx", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := join(t, ctx, coord.Path(), []string{"a", "b"})
	if err := ps["a"].Close(ctx); err != nil {
		t.Fatal(err)
	}
	want(t, "b", outcomeOf(ctx, ps["b"].Outcome), false, "site a left")
	if err := coord.Close(ctx); err != nil {
		t.Fatal(err)
	}

	coord2, err := Begin(ctx, connect(t), "/tx2", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := coord2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if o, ok, err := Lookup(ctx, connect(t), "/tx2"); err != nil || !ok || o.Reason != "coordinator closed" {
		t.Fatalf("Lookup = %v, %v, %v; want abort: coordinator closed", o, ok, err)
	}
}

func TestBadInput(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	sess := connect(t)
	for _, sites := range [][]string{nil, {"a", "a"}, {"a/b"}, {""}, {"x\ny"}} {
		if _, err := Begin(ctx, sess, "/bad", sites); !errors.Is(err, ErrSites) {
			t.Errorf("Begin with sites %q = %v; want ErrSites", sites, err)
		}
	}
	if _, err := Begin(ctx, sess, "rel", []string{"a"}); !errors.Is(err, zkcoord.ErrInvalidPath) {
		t.Errorf("Begin with a relative path = %v", err)
	}
	if _, err := Join(ctx, sess, "/none", "a"); !errors.Is(err, ErrNoTransaction) {
		t.Errorf("Join of a missing transaction = %v; want ErrNoTransaction", err)
	}
	coord, err := Begin(ctx, sess, "/tx", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(ctx, sess, "/tx", []string{"a"}); !errors.Is(err, ErrExists) {
		t.Errorf("second Begin = %v; want ErrExists", err)
	}
	if _, err := Join(ctx, sess, coord.Path(), "z"); !errors.Is(err, ErrUnknownSite) {
		t.Errorf("Join as an unknown site = %v; want ErrUnknownSite", err)
	}
	if _, err := Join(ctx, sess, coord.Path(), "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := Join(ctx, connect(t), coord.Path(), "a"); !errors.Is(err, ErrJoined) {
		t.Errorf("second Join = %v; want ErrJoined", err)
	}
	// Corrupt decision data is reported, not guessed at.
	if _, err := sess.Set(ctx, "/tx/decision", []byte("maybe"), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Lookup(ctx, sess, "/tx"); !errors.Is(err, zkcoord.ErrBadData) {
		t.Errorf("Lookup of a corrupt decision = %v; want ErrBadData", err)
	}
}

// In the default variant only the coordinator watches the votes; with
// WithSitesDecide every site does.
func TestWhoWatchesTheVotes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        []Option
		sitesWatch  bool
		coordinator bool
	}{
		{"coordinator decides", nil, false, true},
		{"sites decide", []Option{WithSitesDecide()}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, time.Minute)
			sites := []string{"s1", "s2", "s3", "s4"}
			csess := connect(t)
			coord, err := Begin(ctx, csess, "/tx", sites)
			if err != nil {
				t.Fatal(err)
			}
			ps, ss := join(t, ctx, coord.Path(), sites, tc.opts...)
			var waits []<-chan result
			if tc.coordinator {
				waits = append(waits, outcomeOf(ctx, coord.Outcome))
			}
			for _, s := range sites {
				waits = append(waits, outcomeOf(ctx, ps[s].Outcome))
			}
			votePath := func(s string) string { return csess.Config().Chroot + "/tx/sites/" + s }
			watchedVotes := func(id int64) (int, error) {
				w, err := cluster.Server(0).Wchc(ctx)
				if err != nil {
					return 0, err
				}
				n := 0
				for _, p := range w[id] {
					for _, s := range sites {
						if p == votePath(s) {
							n++
						}
					}
				}
				return n, nil
			}
			testkit.WaitFor(t, 30*time.Second, "watches in place", func() error {
				for _, s := range sites {
					n, err := watchedVotes(ss[s].ID())
					if err != nil {
						return err
					}
					if tc.sitesWatch && n != len(sites) {
						return fmt.Errorf("site %s watches %d votes", s, n)
					}
				}
				if tc.coordinator {
					if n, err := watchedVotes(csess.ID()); err != nil || n != len(sites) {
						return fmt.Errorf("coordinator watches %d votes (%v)", n, err)
					}
				}
				return nil
			})
			if !tc.sitesWatch {
				for _, s := range sites {
					if n, _ := watchedVotes(ss[s].ID()); n != 0 {
						t.Fatalf("site %s watches %d votes; want none", s, n)
					}
				}
			}
			for _, s := range sites {
				if err := ps[s].Vote(ctx, true); err != nil {
					t.Fatal(err)
				}
			}
			for _, w := range waits {
				want(t, "participant", w, true, "")
			}
		})
	}
}
