# relish - for people who have make; the README's two commands are scripts
# that need only bash and apt (a bare Debian 12 has no make):
#   make demo   = scripts/demo.sh   install what is needed, build relish, run the digits experiment
#   make test   = scripts/test.sh   install what is needed, build with sanitizers, run every test
# Everything builds out of tree with CMake (scripts/build.sh); this file
# only sequences steps.
#   make build            build/release: relish, example programs, benchmarks (no tests)
#   make test-build       build/asan without running the tests
#   make install          relish, relish-runas, docs, examples, the Python helper under PREFIX
#                         (default /usr/local; DESTDIR for staging)

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build/release
TEST_BUILD ?= build/asan
PREFIX ?= /usr/local
export JOBS BUILD TEST_BUILD

.PHONY: all deps build test test-build demo demo-podman bench install clean

all: build

deps:
	scripts/deps.sh build

build: deps
	scripts/build.sh release

test-build:
	scripts/test.sh --build-only

test:
	CTEST_ARGS="$(CTEST_ARGS)" scripts/test.sh

demo:
	scripts/demo.sh

# GNU layout under PREFIX: bin/relish and relish-runas (relish serve runs
# trials as their submitters through it), share/doc/relish (README, docs),
# share/relish/examples, the Python helper (relish_trial.py) where that
# PREFIX's python3 imports from (docs/cli.md "Installing").
install:
	RELISH_BENCH=OFF RELISH_CMAKE_ARGS="-DCMAKE_INSTALL_PREFIX=$(PREFIX)" \
	  scripts/build.sh release relish relish-runas
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) >$(BUILD)/install.log || \
	  { cat $(BUILD)/install.log; exit 1; }
	@echo "install: $$(wc -l <$(BUILD)/install_manifest.txt) files under $(DESTDIR)$(PREFIX)" \
	  "(bin/relish, bin/relish-runas, share/doc/relish, share/relish/examples, relish_trial.py; list:" \
	  "$(BUILD)/install_manifest.txt)"

# The digits demo with every trial in a podman container (docs/containers.md);
# afterwards no relish container may be left.
demo-podman:
	scripts/deps.sh all
	scripts/build.sh release relish
	CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf scripts/podman-image.sh
	CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf $(BUILD)/relish run \
	  examples/digits/digits-podman.yaml --db $${RELISH_DEMO_DB:-relish-demo-podman.db}
	@left=$$(CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf podman ps -a -q --filter label=relish.owner); \
	  CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf podman ps -a --filter label=relish.owner; \
	  if [ -n "$$left" ]; then echo "demo-podman: relish containers left" >&2; exit 1; fi; \
	  echo "demo-podman: no relish container left"

bench:
	scripts/deps.sh bench
	scripts/build.sh release
	scripts/bench.sh $(BUILD)

clean:
	rm -rf build
