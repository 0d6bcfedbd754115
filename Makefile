# relish - the two commands of the README, and a few more.
#   make demo   install what is needed, build, run the digits experiment
#   make test   install what is needed, build with sanitizers, run every test
# Everything builds out of tree with CMake; this file only sequences steps.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build/release
TEST_BUILD ?= build/asan

.PHONY: all deps build test test-build demo demo-podman bench clean

all: build

deps:
	scripts/deps.sh build

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

test-build:
	scripts/deps.sh test
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRELISH_SANITIZE=ON -DRELISH_WERROR=ON >/dev/null
	cmake --build $(TEST_BUILD) -j $(JOBS)

test: test-build
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo:
	scripts/deps.sh demo
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	scripts/demo.sh $(BUILD)

# The digits demo with every trial in a podman container (docs/containers.md);
# afterwards no relish container may be left.
demo-podman:
	scripts/deps.sh all
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf scripts/podman-image.sh
	CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf $(BUILD)/relish run \
	  examples/digits/digits-podman.yaml --db $${RELISH_DEMO_DB:-relish-demo-podman.db}
	@left=$$(CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf podman ps -a -q --filter label=relish.owner); \
	  CONTAINERS_CONF=$(CURDIR)/scripts/containers.conf podman ps -a --filter label=relish.owner; \
	  if [ -n "$$left" ]; then echo "demo-podman: relish containers left" >&2; exit 1; fi; \
	  echo "demo-podman: no relish container left"

bench: build
	scripts/bench.sh $(BUILD)

clean:
	rm -rf build
