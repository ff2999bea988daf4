# zkcoord — see README.md.
GO      ?= go
PKGS    ?= ./...
# Debian packages the tests need: ZooKeeper itself, and the real Curator and
# Kazoo for the interoperability tests.
DEB_PKGS := zookeeper libcurator-recipes-java python3-kazoo libnetty-java

.PHONY: all deps test vet fmt
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

test: deps
	$(GO) test -race -timeout 20m $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -l -w .
