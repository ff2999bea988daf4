//go:build unix

package main

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/zkcoord/zkcoord/zktest/zkserver"
)

// The proxy the demo puts in front of each worker passes bytes to the
// server, drops them both ways while blackholed without closing
// connections, and on Heal closes the connections that were open during
// the blackhole and passes bytes again.
func TestFaultProxy(t *testing.T) {
	t.Parallel()
	p, err := zkserver.OpenProxy(cluster.Servers())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	addr := p.Servers()[0]
	ruok := func(d time.Duration) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		return zkserver.FourLetter(ctx, addr, "ruok")
	}
	if got, err := ruok(10 * time.Second); err != nil || got != "imok" {
		t.Fatalf("ruok through the proxy = %q, %v", got, err)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("ruok")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	conn.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := conn.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("blackholed connection read %q, %v; want nothing, and the connection open", buf[:n], err)
	}
	if got, err := ruok(time.Second); err == nil {
		t.Fatalf("a new connection got %q through a blackhole", got)
	}

	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conn.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("a connection that lost bytes read %q, %v after Heal; want it closed", buf[:n], err)
	}
	if got, err := ruok(10 * time.Second); err != nil || got != "imok" {
		t.Fatalf("ruok after Heal = %q, %v", got, err)
	}

	p.Close()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the proxy still accepts connections after Close")
	}
}
