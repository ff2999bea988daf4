package election_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/election"
)

// exampleServers returns the ZooKeeper servers the examples run against.
func exampleServers() []string { return shared.Servers() }

// Run a singleton job only while leading.
func ExampleElection_Campaign() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	e, err := election.New(sess, "/examples/scheduler", election.WithID("worker-1"))
	if err != nil {
		log.Fatal(err)
	}
	l, err := e.Campaign(ctx) // blocks until this process leads
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leading as", l.ID())

	// The job runs under l.Context(), which is cancelled when leadership
	// ends, and passes l.Token() with every write to the resource.
	job := func(ctx context.Context, token int64) { /* ... */ }
	job(l.Context(), l.Token())

	who, err := e.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", who.ID, "acting:", who.Acting)

	if err := l.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	<-l.Done()
	fmt.Println("resigned:", errors.Is(l.Err(), election.ErrResigned))
	// Output:
	// leading as worker-1
	// leader: worker-1 acting: true
	// resigned: true
}

// Lead again after each leadership ends, until told to stop.
func ExampleElection_Lead() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	e, err := election.New(sess, "/examples/requeue", election.WithID("worker-1"))
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	terms := 0
	err = e.Lead(runCtx, func(ctx context.Context, l *election.Leadership) error {
		terms++
		fmt.Println("leading, term", terms)
		if terms == 1 {
			return nil // gives this leadership up; Lead campaigns again
		}
		stop()       // ends this leadership and Lead
		<-ctx.Done() // a real leader works until ctx ends
		return nil
	})
	fmt.Println("stopped:", errors.Is(err, context.Canceled))
	// Output:
	// leading, term 1
	// leading, term 2
	// stopped: true
}

// Anyone can watch who leads.
func ExampleElection_Observe() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	e, _ := election.New(sess, "/examples/observe", election.WithID("svc-a"))
	obsCtx, stop := context.WithCancel(ctx)
	leaders := e.Observe(obsCtx).Changes()
	fmt.Printf("leader: %q\n", (<-leaders).ID)

	l, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for who := range leaders {
		if who.Acting {
			fmt.Printf("leader: %q (acting)\n", who.ID)
			break
		}
	}
	l.Resign(ctx)
	stop()
	for range leaders {
	}
	// Output:
	// leader: ""
	// leader: "svc-a" (acting)
}

// Ask the leader to step down, and let it decide.
func ExampleElection_Revoke() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	e, err := election.New(sess, "/examples/revoke", election.WithID("worker-1"))
	if err != nil {
		log.Fatal(err)
	}
	l, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	revoked := l.Revoked() // watch for requests from now on

	// An operator (or `zkcoord election revoke /examples/revoke`) asks.
	asked, err := e.Revoke(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("asked:", asked.ID)

	<-revoked
	// This leader agrees: it finishes its work and resigns.
	if err := l.Resign(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("resigned:", errors.Is(l.Err(), election.ErrResigned))
	// Output:
	// asked: worker-1
	// resigned: true
}

// A leader advertises where it serves, and says so again when that
// changes; observers read it with the leader.
func ExampleLeadership_Proclaim() {
	ctx := context.Background()
	sess, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: exampleServers()})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	e, _ := election.New(sess, "/examples/proclaim", election.WithID("svc-a"), election.WithValue("10.0.0.1:8080"))
	l, err := e.Campaign(ctx)
	if err != nil {
		log.Fatal(err)
	}
	who, _ := e.Leader(ctx)
	fmt.Printf("%s serves at %s\n", who.ID, who.Value)
	if err := l.Proclaim(ctx, "10.0.0.1:9090"); err != nil {
		log.Fatal(err)
	}
	who, _ = e.Leader(ctx)
	fmt.Printf("%s serves at %s\n", who.ID, who.Value)

	// Once it has resigned, its word no longer counts.
	l.Resign(ctx)
	err = l.Proclaim(ctx, "10.0.0.1:7070")
	fmt.Println("after Resign:", errors.Is(err, zkcoord.ErrNotOwner))
	// Output:
	// svc-a serves at 10.0.0.1:8080
	// svc-a serves at 10.0.0.1:9090
	// after Resign: true
}
