package chaos_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/chaos"
)

func planOptions(w chaos.Workload, seed uint64) chaos.Options {
	return chaos.Options{Workload: w, Seed: seed, Duration: time.Minute}
}

// TestPlanReproducible: a seed always gives the same schedule; another seed
// another one.
func TestPlanReproducible(t *testing.T) {
	a, err := chaos.Plan(planOptions(chaos.RebalanceIncremental, 42), 200)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := chaos.Plan(planOptions(chaos.RebalanceIncremental, 42), 200)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different schedules")
	}
	c, _ := chaos.Plan(planOptions(chaos.RebalanceIncremental, 43), 200)
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 42 and 43 give the same schedule")
	}
	short, _ := chaos.Plan(planOptions(chaos.RebalanceIncremental, 42), 20)
	if !reflect.DeepEqual(short, a[:20]) {
		t.Fatal("a shorter plan is not a prefix of a longer one")
	}
}

// TestPlanCovers: a long schedule has every kind of fault, with lengths in
// their classes relative to the session timeout and the self-expiry limit,
// and never takes the group beyond its limits.
func TestPlanCovers(t *testing.T) {
	for _, w := range chaos.Workloads() {
		o := planOptions(w, 7)
		o.SessionTimeout = 4 * time.Second
		faults, err := chaos.Plan(o, 2000)
		if err != nil {
			t.Fatal(err)
		}
		T := o.SessionTimeout
		lost := time.Duration(float64(T) * 2 / 3)
		seen := map[chaos.Kind]bool{}
		// Defaults: 4 clients in [2, 6]; 10 resources in [6, 15] for the
		// rebalancer (never fewer than the most clients), 3 in [1, 4]
		// otherwise, none added or removed for the queue and discovery.
		clients, resources, minRes, maxRes := 4, 10, 6, 15
		switch w {
		case chaos.Election, chaos.Lock, chaos.Recovery:
			resources, minRes, maxRes = 3, 1, 4
		case chaos.Queue, chaos.Discovery: // one queue, one service
			resources, minRes, maxRes = 1, 1, 1
		}
		var check func(f chaos.Fault)
		check = func(f chaos.Fault) {
			seen[f.Kind] = true
			switch f.Kind {
			case chaos.PauseShort, chaos.PartitionShort:
				if f.Dur <= 0 || f.Dur >= lost-T/3 {
					t.Errorf("%s: %v not below the self-expiry limit %v less the ping interval", f.Kind, f.Dur, lost)
				}
			case chaos.PauseMedium, chaos.PartitionMedium:
				if f.Dur <= lost || f.Dur >= T {
					t.Errorf("%s: %v not between %v and %v", f.Kind, f.Dur, lost, T)
				}
			case chaos.PauseLong, chaos.PartitionLong:
				if f.Dur <= T {
					t.Errorf("%s: %v not beyond the session timeout", f.Kind, f.Dur)
				}
			case chaos.AddClient:
				clients++
			case chaos.RemoveClient:
				clients--
			case chaos.AddResource:
				resources++
			case chaos.RemoveResource:
				resources--
			case chaos.Storm:
				if len(f.Sub) < 2 {
					t.Errorf("storm of %d", len(f.Sub))
				}
				for _, s := range f.Sub {
					if s.Kind == chaos.Storm || s.Kind == chaos.AddClient || s.Kind == chaos.RemoveClient {
						t.Errorf("storm with %s", s.Kind)
					}
					check(s)
				}
			}
		}
		for _, f := range faults {
			check(f)
			if clients < 2 || clients > 6 {
				t.Fatalf("%s: %d clients", w, clients)
			}
			if resources < minRes || resources > maxRes {
				t.Fatalf("%s: %d resources", w, resources)
			}
		}
		for _, k := range chaos.KindsOf(w) {
			if !seen[k] {
				t.Errorf("%s: no %s in 2000 faults", w, k)
			}
		}
	}
}

func TestParseWorkload(t *testing.T) {
	for _, w := range chaos.Workloads() {
		if got, err := chaos.ParseWorkload(string(w)); err != nil || got != w {
			t.Fatalf("ParseWorkload(%q) = %q, %v", w, got, err)
		}
	}
	if _, err := chaos.ParseWorkload("nope"); err == nil {
		t.Fatal("want an error")
	}
	if _, err := chaos.Plan(chaos.Options{Workload: chaos.Lock, Clients: 3, MinClients: 4}, 1); err == nil {
		t.Fatal("want an error for MinClients > Clients")
	}
}
