package config

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/internal/tool/testkit"
)

func TestCompareAndSet(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	n, err := New(connect(t), "/cas")
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := n.CompareAndSet(ctx, []byte("x"), []byte("y")); err != nil || ok {
		t.Fatalf("CAS of a missing node from x = %v, %v; want false", ok, err)
	}
	if ok, v, err := n.CompareAndSet(ctx, nil, []byte("a")); err != nil || !ok || string(v.Data) != "a" {
		t.Fatalf("CAS creating the node = %v, %+v, %v", ok, v, err)
	}
	if ok, v, err := n.CompareAndSet(ctx, []byte("b"), []byte("c")); err != nil || ok || string(v.Data) != "a" {
		t.Fatalf("CAS from a wrong value = %v, %+v, %v; want false and the current a", ok, v, err)
	}
	if ok, v, err := n.CompareAndSet(ctx, []byte("a"), []byte("b")); err != nil || !ok || string(v.Data) != "b" {
		t.Fatalf("CAS a to b = %v, %+v, %v", ok, v, err)
	}
}

// Concurrent compare-and-set increments never lose one.
func TestCompareAndSetConcurrent(t *testing.T) {
	ctx := testkit.Ctx(t, 2*time.Minute)
	const clients, rounds = 4, 15
	var wg sync.WaitGroup
	for range clients {
		n, err := New(connect(t), "/cas-count")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				for {
					cur, _ := n.Get(ctx)
					var v int
					fmt.Sscan(string(cur.Data), &v)
					ok, _, err := n.CompareAndSet(ctx, cur.Data, []byte(fmt.Sprint(v+1)))
					if err != nil {
						t.Errorf("CAS: %v", err)
						return
					}
					if ok {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	n, _ := New(connect(t), "/cas-count")
	if v, err := n.Get(ctx); err != nil || string(v.Data) != fmt.Sprint(clients*rounds) {
		t.Fatalf("after %d increments: %q, %v", clients*rounds, v.Data, err)
	}
}
