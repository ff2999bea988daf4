//go:build unix

package main

import (
	"os"
	"testing"

	"github.com/zkcoord/zkcoord/zktest"
)

// cluster is a real ZooKeeper server shared by the tests.
var cluster *zktest.Cluster

func TestMain(m *testing.M) {
	os.Exit(zktest.Main(m, func(c *zktest.Cluster) { cluster = c }))
}
