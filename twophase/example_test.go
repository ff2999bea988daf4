package twophase_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/twophase"
)

func connect(ctx context.Context) *zkcoord.Session {
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{
		Servers: strings.Split(os.Getenv("ZOOKEEPER_SERVERS"), ","),
	})
	if err != nil {
		panic(err)
	}
	return sess
}

func Example() {
	ctx := context.Background()
	coordSess := connect(ctx)
	defer coordSess.Close(ctx)
	_ = twophase.Remove(ctx, coordSess, "/examples/tx/transfer-17") // start afresh

	// The coordinator names the sites and publishes the transaction.
	sites := []string{"ledger", "audit"}
	coord, err := twophase.Begin(ctx, coordSess, "/examples/tx/transfer-17", sites,
		twophase.WithPayload([]byte("move 100 from A to B")))
	if err != nil {
		panic(err)
	}

	// Each site joins, looks at the payload and votes.
	var wg sync.WaitGroup
	for _, site := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := connect(ctx)
			defer sess.Close(ctx)
			p, err := twophase.Join(ctx, sess, coord.Path(), site)
			if err != nil {
				panic(err)
			}
			ok := strings.HasPrefix(string(p.Payload()), "move ")
			if err := p.Vote(ctx, ok); err != nil {
				panic(err)
			}
			if _, err := p.Outcome(ctx); err != nil { // commit or abort
				panic(err)
			}
		}()
	}

	// The coordinator decides once the votes are in.
	outcome, err := coord.Outcome(ctx)
	if err != nil {
		panic(err)
	}
	wg.Wait()
	fmt.Println("outcome:", outcome)
	// Output:
	// outcome: commit
}

func ExampleParticipant_Vote() {
	ctx := context.Background()
	sess := connect(ctx)
	defer sess.Close(ctx)
	_ = twophase.Remove(ctx, sess, "/examples/tx/risky")

	coord, _ := twophase.Begin(ctx, sess, "/examples/tx/risky", []string{"east", "west"})
	east, _ := twophase.Join(ctx, sess, coord.Path(), "east")
	// One abort vote is enough: the decision is written at once.
	if err := east.Vote(ctx, false); err != nil {
		panic(err)
	}
	o, decided, _ := twophase.Lookup(ctx, sess, coord.Path())
	fmt.Println(decided, o)
	// Output:
	// true abort: site east voted abort
}
