// Package bench measures zkcoord side by side with what its users would
// pick instead: go-zookeeper/zk used directly, Apache Curator 5.4 (Java) and
// Kazoo 2.8 (Python), in one run.
//
// It is a module of its own (bench/go.mod, which points at the zkcoord module
// in the parent directory), so that the plotting library it needs is no
// requirement of zkcoord; run its commands from this directory. Everything
// here is also behind the build tag "bench". The full suite, which writes
// docs/benchmarks.md, the raw results in docs/bench/results.json and the
// charts in docs/bench/*.png, is
//
//	make bench
//
// which runs
//
//	cd bench && go test -tags bench -run '^TestBench$' -timeout 60m -v .
//
// Flags (after -args, or in BENCH_FLAGS for make): -bench.quick runs few
// iterations, for trying the suite out; -bench.only=REGEXP runs only the
// suites whose id matches (ids carry their setting: "lock", "lock@1ms",
// "crash-leader-4s@1ms"; "queue" selects the queue suites, one per depth); -bench.nodelay measures on loopback only;
// -bench.out=DIR changes where the report goes (default ../docs);
// -bench.render measures nothing and renders the report and charts again
// from DIR/bench/results.json (after editing bench/findings.md, say).
//
// The Go workloads are also ordinary Go benchmarks:
//
//	cd bench && go test -tags bench -run '^$' -bench . .
//
// # Settings
//
// Loopback: one standalone ZooKeeper 3.8 server (zktest, fsync off) serves
// every implementation; a request costs CPU, not a round trip.
//
// Deployed-like: a 3-server ensemble with fsync on (zktest.WithFsync), every
// client behind a zktest Proxy that delays each direction by 0.25 ms (a
// rack) or 1 ms (zones apart). Each operation is reported in round trips of
// the injected delay beside the protocol's minimum (rtt_test.go). The crash
// suites run in the 1 ms setting: every participant is a process of its own
// (zkcoord: this test binary re-executed as TestGoPeer; Curator and Kazoo:
// their peer programs), one is killed with SIGKILL and the time until
// another acts in its place is taken.
//
// # Method
//
// The Java and Python peers are long-lived processes (bench/peers) driven
// over stdin/stdout: the Go driver sends one command per step, the peer runs
// it and answers with its own measurements, taken with its own monotonic
// clock (the crash suites use the wall clock, one machine's). Rounds are
// interleaved (A, B, C, A, B, C, ...) so that drift of the machine affects
// every implementation alike; the first round of each suite is a discarded
// warm-up (it also lets the JVM compile its hot paths). Reported are the
// 10th, 50th and 90th percentiles of all recorded samples and the ratio of
// zkcoord's median to each peer's.
//
// The servers' own counters (the mntr four-letter word, added up over the
// servers) are read before and after every step, so each step also reports
// the ZooKeeper requests it caused (packets received, of which writes), and
// how many watch notifications the servers sent.
package bench
