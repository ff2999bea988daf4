package zktest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest"
)

// A program (a demo, a benchmark driver) can run a cluster without a test.
func TestLaunchAndClose(t *testing.T) {
	c, err := zktest.Launch()
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if m, err := c.Server(0).Srvr(ctx); err != nil || m["Mode"] != "standalone" {
		t.Fatalf("srvr = %v, %v", m, err)
	}
	p, err := c.OpenProxy()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Servers()) != 1 {
		t.Fatalf("proxy addresses %v", p.Servers())
	}
	c.Close()
	c.Close()
	if c.Server(0).Running() {
		t.Fatal("server still running after Close")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("cluster directory left behind: %v", err)
	}
}
