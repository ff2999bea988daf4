package interop_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord"
	"github.com/zkcoord/zkcoord/internal/tool/interop"
	"github.com/zkcoord/zkcoord/zktest"
)

func TestPeersTalkToTheSameServer(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := zkcoord.Connect(ctx, zkcoord.Config{Servers: c.Servers()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)

	java := interop.CompileJava(t, "testdata/Ping.java").Start(t, c.ConnectString())
	py := interop.StartPython(t, "testdata/ping.py", c.ConnectString())
	for _, peer := range []struct {
		p    *interop.Proc
		path string
	}{{java, "/from/curator"}, {py, "/from/kazoo"}} {
		if _, err := peer.p.Expect(ctx, "ready"); err != nil {
			t.Fatal(err)
		}
		if err := peer.p.Send("create " + peer.path); err != nil {
			t.Fatal(err)
		}
		if _, err := peer.p.Expect(ctx, "created "+peer.path); err != nil {
			t.Fatal(err)
		}
		if ok, _, err := s.Exists(ctx, peer.path); err != nil || !ok {
			t.Fatalf("%s not visible to zkcoord: %v %v", peer.path, ok, err)
		}
	}
}
