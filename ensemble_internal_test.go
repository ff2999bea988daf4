package zkcoord

import (
	"testing"
	"time"
)

func TestParseConf(t *testing.T) {
	quorum := "clientPort=2181\ndataDir=/var/lib/zookeeper/version-2\ntickTime=2000\nmaxClientCnxns=60\n" +
		"initLimit=10\nsyncLimit=5\nelectionAlg=3\npeerType=0\n"
	tick, sync, ok := parseConf(quorum)
	if !ok || tick != 2*time.Second || sync != 5 {
		t.Fatalf("quorum conf: %v %v %v", tick, sync, ok)
	}
	if _, _, ok := parseConf("clientPort=2181\ntickTime=2000\nserverId=0\n"); ok {
		t.Fatal("standalone conf (no syncLimit) read as an ensemble")
	}
	if _, _, ok := parseConf("conf is not executed because it is not in the whitelist.\n"); ok {
		t.Fatal("a refusal read as a conf")
	}
}

func TestEnsembleRisk(t *testing.T) {
	for _, c := range []struct {
		tick    time.Duration
		sync    int
		timeout time.Duration
		lost    float64
		safe    bool
	}{
		// ZooKeeper's sample configuration: a follower may answer for 10s.
		{2 * time.Second, 5, 10 * time.Second, 2.0 / 3, false},
		{2 * time.Second, 5, 40 * time.Second, 2.0 / 3, false},
		{2 * time.Second, 5, 40 * time.Second, 0.5, true},
		{time.Second, 2, 10 * time.Second, 0.5, true},
		{time.Second, 2, 10 * time.Second, 2.0 / 3, false},
	} {
		worst, room := ensembleRisk(c.tick, c.sync, c.timeout, c.lost)
		if (worst < room) != c.safe {
			t.Errorf("%+v: worst %v, room %v; want safe=%v", c, worst, room, c.safe)
		}
	}
}
