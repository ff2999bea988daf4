package lock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/seq"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
)

// TestOrderMatchesCuratorItself sorts random lock directories, with
// sequence numbers on both sides of the 32-bit wrap, with Curator's own
// code (StandardLockInternalsDriver.standardFixForSorting, run in a JVM)
// and checks that zkcoord orders them the same way.
func TestOrderMatchesCuratorItself(t *testing.T) {
	prog := interop.CompileJava(t, "testdata/CuratorLocks.java")
	proc := prog.Start(t, "-") // no ZooKeeper needed
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := proc.Expect(ctx, "ready"); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 200; round++ {
		n := 2 + r.IntN(10)
		seen := map[int32]bool{}
		var mutex, rw []string
		for len(mutex) < n {
			s := randomSeq(r)
			if seen[s] {
				continue
			}
			seen[s] = true
			id := fmt.Sprintf("_c_%08x-1111-2222-3333-%012x-", r.Uint32(), r.Uint64()&0xffffffffffff)
			if r.IntN(4) == 0 {
				mutex = append(mutex, fmt.Sprintf("%032x__lock__%s", r.Uint64(), seq.Format(s))) // Kazoo's form
			} else {
				mutex = append(mutex, id+"lock-"+seq.Format(s))
			}
			kind := []string{"__READ__", "__WRIT__"}[r.IntN(2)]
			rw = append(rw, id+kind+seq.Format(s))
		}
		// Curator orders Kazoo's names by the whole name; compare only
		// the names it understands.
		var curatorNames []string
		for _, m := range mutex {
			if strings.Contains(m, "lock-") {
				curatorNames = append(curatorNames, m)
			}
		}
		for _, tc := range []struct {
			cmd       string
			names     []string
			recognise func(string) (contender, bool)
		}{
			{"sort lock-", curatorNames, mutexContender},
			{"sortrw", rw, rwContender},
		} {
			tag := fmt.Sprintf("t%d", round)
			if err := proc.Send(tag + " " + tc.cmd + " " + strings.Join(tc.names, " ")); err != nil {
				t.Fatal(err)
			}
			line, err := proc.Expect(ctx, tag+" ")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(line)
			if len(f) < 2 || f[1] != "sorted" {
				t.Fatalf("curator: %s", line)
			}
			want := f[2:]
			got := names(sortContenders(tc.names, tc.recognise))
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s order differs from Curator's:\n got %v\nwant %v", tc.cmd, got, want)
			}
		}
	}
}
