package zkcoord_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/testkit"
	"github.com/zkcoord/zkcoord/zktest"
)

// EnsureContainers creates the missing nodes of a path as containers, which
// the server deletes once their last child is gone; EnsurePath creates
// persistent nodes, which stay. A client cannot tell the two apart by their
// Stat (ZooKeeper reports a container's ephemeral owner as 0), so the test
// watches what the server does with them.
func TestEnsureContainers(t *testing.T) {
	// The server looks for empty containers every 100ms instead of every
	// minute. The JVM reads JAVA_TOOL_OPTIONS; the server inherits it.
	t.Setenv("JAVA_TOOL_OPTIONS", strings.TrimSpace(os.Getenv("JAVA_TOOL_OPTIONS")+" -Dznode.container.checkIntervalMs=100"))
	c := zktest.Start(t)
	s := connect(t, zkcoord.Config{Servers: c.Servers()})
	ctx := testCtx(t, 60*time.Second)
	exists := func(path string) bool {
		t.Helper()
		ok, _, err := s.Exists(ctx, path)
		if err != nil {
			t.Fatalf("Exists(%s): %v", path, err)
		}
		return ok
	}

	if err := s.EnsurePath(ctx, "/kept/p"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second call finds everything in place
		if err := s.EnsureContainers(ctx, "/kept/c/d"); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"/kept", "/kept/p", "/kept/c", "/kept/c/d"} {
		if !exists(p) {
			t.Fatalf("%s was not created", p)
		}
	}
	// The server deletes a container only once it has had a child.
	for _, p := range []string{"/kept/p", "/kept/c/d"} {
		if _, err := s.Create(ctx, p+"/x", nil, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, p+"/x", -1); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Eventually(t, 20*time.Second, "the emptied containers to be deleted", func() bool {
		return !exists("/kept/c/d") && !exists("/kept/c")
	})
	// /kept/p was emptied first, so the server has looked at it too.
	for _, p := range []string{"/kept", "/kept/p"} {
		if !exists(p) {
			t.Errorf("persistent node %s was deleted", p)
		}
	}
}
