# relish - the two commands of the README, and a few more.
#   make demo   install what is needed, build, run the digits experiment
#   make test   install what is needed, build with sanitizers, run every test
# Everything builds out of tree with CMake; this file only sequences steps.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build/release
TEST_BUILD ?= build/asan

.PHONY: all deps build test test-build demo bench clean

all: build

deps:
	scripts/deps.sh build

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

test-build:
	scripts/deps.sh test
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRELISH_SANITIZE=ON -DRELISH_WERROR=ON >/dev/null
	cmake --build $(TEST_BUILD) -j $(JOBS)

test: test-build
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo:
	scripts/deps.sh demo
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	scripts/demo.sh $(BUILD)

bench: build
	scripts/bench.sh $(BUILD)

clean:
	rm -rf build
