#!/usr/bin/env bash
# docker-check.sh - the container cases of tests/test_run_podman.sh (run to
# completion, out of memory, cancel, kill -9 and adopt, missing image,
# runtime failure) with trial.executor: docker, and the executor cases of
# tests/test_podman.c (same output as a process, memory limit, cancel and
# timeout, runtime against trial failures, a warm container serving two
# segments, reconcile of an orphan), against a real docker daemon.  Not run in CI (the CI machines are not known to run dockerd);
# docs/containers.md records its last run.
#
#   scripts/docker-check.sh [BUILD_DIR]     (default build/release; built
#                                             with `make build` if missing)
#
# The daemon is this script's own (root, like the podman tests): its data,
# state and socket live in a temporary folder and DOCKER_HOST points there,
# so a docker already running on the machine is neither used nor disturbed.
# No bridge network or iptables (trials run with --network none), the vfs
# storage driver (no overlay mounts needed).  The daemon is stopped and its
# folder removed afterwards.  Needs docker.io (Debian) or docker-ce: dockerd
# and docker.  Exit 0 when every case passed, 1 otherwise.
# DOCKER_CHECK_BENCH=1 also runs bench/bench_container against docker.
set -euo pipefail
RELISH_SRC=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$RELISH_SRC/build/release}
[ -x "$build/relish" ] && [ -x "$build/ctrial" ] || make -C "$RELISH_SRC" build >/dev/null
RELISH_BUILD=$(cd "$build" && pwd)
RELISH=$RELISH_BUILD/relish
export RELISH RELISH_BUILD RELISH_SRC
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v dockerd >/dev/null || fail "dockerd not installed (apt-get install docker.io)"
command -v docker >/dev/null || fail "docker not installed (apt-get install docker.io)"
[ "$(id -u)" -eq 0 ] || fail "dockerd needs root (as the podman tests do)"
d=$(mktemp -d /tmp/relish-dockerd-XXXXXX)
pid=
stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  # vfs layers may hold read-only files: make them removable first
  chmod -R u+w "$d" 2>/dev/null || true
  rm -rf "$d"
}
trap stop EXIT
dockerd --data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" \
  --host "unix://$d/docker.sock" --iptables=false --ip6tables=false --bridge=none \
  --storage-driver=vfs >"$d/dockerd.log" 2>&1 &
pid=$!
export DOCKER_HOST="unix://$d/docker.sock"
for _ in $(seq 1 300); do
  docker version >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "dockerd exited: $(tail -5 "$d/dockerd.log")"
  sleep 0.1
done
docker version >/dev/null 2>&1 || fail "dockerd did not answer within 30 s: $(tail -5 "$d/dockerd.log")"
RELISH_TEST_ENGINE=docker bash "$RELISH_SRC/tests/test_run_podman.sh" ||
  fail "relish run cases (daemon log: $(tail -3 "$d/dockerd.log"))"
if [ -x "$RELISH_BUILD/test_podman" ]; then
  RELISH_TEST_ENGINE=docker "$RELISH_BUILD/test_podman" >"$d/test_podman.log" 2>&1 ||
    fail "executor cases: $(grep -E 'FAILED|ERROR|LINE' "$d/test_podman.log" | head -5)"
  echo "test_podman (docker): $(grep -E '^\[  PASSED  \]' "$d/test_podman.log")"
else
  fail "$RELISH_BUILD/test_podman not built (make test-build, or a build with the tests)"
fi
if [ -n "${DOCKER_CHECK_BENCH:-}" ]; then
  # what a docker container costs per segment (docs/containers.md)
  BENCH_ENGINE=docker "$RELISH_BUILD/bench_container" 20 5
fi
echo "docker-check: every case passed with $(docker version --format 'docker {{.Client.Version}}, daemon {{.Server.Version}}')"
