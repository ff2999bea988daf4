# zkcoord — see README.md.
GO      ?= go
# The modules of the workspace (go.work): the library with zktest, the
# tools (cmd/), the Prometheus adapter and the Kerberos mechanism; bench/
# has its own target.
PKGS    ?= ./... ./cmd/... ./metrics/prom/... ./kerberos/...
# Debian packages the tests need: ZooKeeper itself, the real Curator and
# Kazoo for the interoperability tests (curator-x-discovery for service
# discovery), Chromium for the console's browser tests, Spin for the
# protocol models (it compiles its verifiers with gcc), and MIT Kerberos'
# KDC for the Kerberos tests (zktest.StartKDC).
DEB_PKGS := zookeeper libcurator-recipes-java libcurator-discovery-java python3-kazoo libnetty-java chromium spin gcc krb5-kdc krb5-admin-server

.PHONY: all deps test vet fmt lint chaos randomized cross model fuzz fuzz-brief
all: test

# deps installs what is missing, quietly when everything is there.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

test: deps cross lint fuzz-brief
	$(GO) test -race -timeout 20m $(PKGS)

# fuzz runs every fuzzer of FUZZ_PKGS for FUZZTIME each, one after another
# (go test -fuzz takes one at a time). make test runs the decoders of the
# ZooKeeper wire briefly (fuzz-brief); the seed corpora of all of them run
# with the ordinary tests. A failure leaves its input in the package's
# testdata/fuzz, which the ordinary tests then replay.
FUZZTIME  ?= 1m
FUZZ_PKGS ?= ./internal/wire ./internal/seq ./lock ./queue ./rebalance/alloc
fuzz:
	@for p in $(FUZZ_PKGS); do \
		for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "fuzz: $$p $$f for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$p || exit 1; \
		done; \
	done

# fuzz-brief gives each fuzzer a number of inputs, not a time: before Go
# 1.27, a run that ends at a -fuzztime deadline can fail with a bare
# "context deadline exceeded" and no failing input (a race in Go's fuzzing
# coordinator, golang/go#75804), which a busy machine makes likelier. A
# count has no deadline. make fuzz may be given one too: FUZZTIME=100000x.
fuzz-brief:
	@$(MAKE) --no-print-directory fuzz FUZZ_PKGS=./internal/wire FUZZTIME=30000x

# lint runs staticcheck (a pinned version, fetched by the go command) over
# the tree as shipped and in the builds with the test switches.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(STATICCHECK) $(PKGS)
	$(STATICCHECK) -tags zkcoord_broken ./cmd/... ./lock ./chaos
	$(STATICCHECK) -tags zkcoord_broken_claim ./queue ./chaos

# cross builds and vets the whole tree (tests included) for the other
# platforms zkcoord supports, so that it keeps building there. It tries
# every platform and fails at the end if any failed.
CROSS_PLATFORMS ?= darwin/amd64 darwin/arm64 windows/amd64
cross:
	@failed=""; for p in $(CROSS_PLATFORMS); do 		os=$${p%/*}; arch=$${p#*/}; 		echo "cross: GOOS=$$os GOARCH=$$arch go build && go vet $(PKGS)"; 		GOOS=$$os GOARCH=$$arch $(GO) build $(PKGS) && 		GOOS=$$os GOARCH=$$arch $(GO) vet $(PKGS) || failed="$$failed $$p"; 	done; 	if [ -n "$$failed" ]; then echo "cross: failed for$$failed"; exit 1; fi

# randomized runs the rebalancer's randomized fault test at full size
# (10 client processes, 120 resources, 250 steps per mode); make test runs
# it small. REBALANCE_SEED=N replays a run.
randomized: deps
	REBALANCE_FULL=1 $(GO) test -race -run '^TestRandomized$$' -count=1 -timeout 30m -v ./rebalance/

# model checks the Promela models of the election, the lock, the
# rebalancer and the work queue's claims (model/, model/README.md) with
# Spin: the small configurations,
# which make test runs too, and the large ones; every correct model must
# verify and every broken variant must yield a counterexample. One verifier
# runs at a time: the largest needs about 5 GB of memory.
model: deps
	$(GO) test -run '^TestModels$$' -count=1 -parallel 1 -timeout 120m -v ./model/ -args -model.full

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -l -w .

# chaos runs the fault-injection harness (chaos/, docs/reliability.md): a
# 3-server ensemble, client processes, a fenced resource service and a seeded
# fault schedule, DURATION of faults per workload. Reports, timelines and
# logs go to CHAOS_OUT. For example: make chaos WORKLOAD=lock DURATION=2m SEED=7
WORKLOAD  ?= all
DURATION  ?= 10m
SEED      ?= 42
CHAOS_OUT ?= chaos-out
chaos: deps
	$(GO) run -race ./chaos/cmd/chaos -workload $(WORKLOAD) -duration $(DURATION) -seed $(SEED) -out $(CHAOS_OUT)

# demo builds the zkcoord command and zkcoord-demo (cmd/zkcoord-demo: the
# demo and its checker, which zkcoord demo runs) into bin/ and plays the
# demo: worker processes sharing resources on a ZooKeeper server of the
# demo's own, while a worker joins, the coordinator is killed, resources
# change and a worker is cut off the network; it ends with a verdict. deps
# installs ZooKeeper first if it is missing. DEMO_FLAGS passes flags on,
# for example make demo DEMO_FLAGS="--workers 4 --plain". UI=ADDR serves
# the web console of the demo's ZooKeeper on ADDR beside the terminal view,
# for example make demo UI=127.0.0.1:8080.
ZKCOORD_BIN ?= bin/zkcoord
ZKCOORD_DEMO_BIN ?= $(dir $(ZKCOORD_BIN))zkcoord-demo
DEMO_FLAGS  ?=
UI          ?=
.PHONY: demo zkcoord
zkcoord:
	@command -v $(GO) >/dev/null || { echo "Go 1.24 or newer is needed: https://go.dev/dl/"; exit 1; }
	$(GO) build -o $(ZKCOORD_BIN) ./cmd/zkcoord
demo: deps zkcoord
	$(GO) build -o $(ZKCOORD_DEMO_BIN) ./cmd/zkcoord-demo
	@$(ZKCOORD_BIN) demo $(if $(UI),--ui $(UI)) $(DEMO_FLAGS)

# bench measures zkcoord side by side with go-zookeeper, Curator and Kazoo
# (bench/, a module of its own so that its plotting library is no
# requirement of zkcoord, and behind the build tag "bench"): on loopback
# against one server, then deployed-like against a 3-server ensemble with
# fsync on, every client behind a proxy delaying each direction by 0.25 ms
# and 1 ms, with crash failover of separate processes. It writes
# docs/benchmarks.md, docs/bench/results.json and docs/bench/*.png, in
# about 25 minutes on 2 cores. It installs what is missing first: deps, and
# a JDK to compile the Curator program. BENCH_FLAGS passes flags on, for
# example make bench BENCH_FLAGS="-bench.quick" (a few minutes) or
# BENCH_FLAGS="-bench.only=lock -bench.nodelay".
BENCH_FLAGS ?=
.PHONY: bench
bench: deps
	@command -v javac >/dev/null || { \
		echo "installing: default-jdk-headless"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends default-jdk-headless >/dev/null; }
	cd bench && $(GO) vet -tags bench ./...
	cd bench && ZKBENCH_COMMAND="make bench $(BENCH_FLAGS)" $(GO) test -tags bench -run '^TestBench$$' -count=1 -timeout 60m -v . -args $(BENCH_FLAGS)
