#!/usr/bin/env bash
# build.sh KIND [TARGET...] - configure and build one of relish's build
# folders, printing a line or two instead of the compiler's hundreds:
#   release  build/release, optimised, without the tests (they need cmocka):
#            relish, the example trial programs and the benchmarks
#   test     build/asan, Debug with ASan+UBSan and -Werror, every target
#            including the cmocka tests
# With TARGETs only those are built (the demo builds `relish` alone).  The
# whole output goes to DIR/build.log; when the build fails its last lines
# are printed.  RELISH_VERBOSE=1 prints everything as it comes.
# Env: JOBS (default: the number of CPUs), BUILD / TEST_BUILD (the folders),
#      RELISH_BENCH=OFF (release without the benchmarks), RELISH_CMAKE_ARGS
#      (more -D options, e.g. -DCMAKE_INSTALL_PREFIX=/usr).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
shift || true
case "$kind" in
  release)
    dir=${BUILD:-build/release}
    conf=(-DCMAKE_BUILD_TYPE=Release -DRELISH_TESTS=OFF -DRELISH_BENCH="${RELISH_BENCH:-ON}") ;;
  test)
    dir=${TEST_BUILD:-build/asan}
    conf=(-DCMAKE_BUILD_TYPE=Debug -DRELISH_SANITIZE=ON -DRELISH_WERROR=ON -DRELISH_TESTS=ON
          -DRELISH_BENCH=ON) ;;
  *) echo "usage: scripts/build.sh release|test [TARGET...]" >&2; exit 2 ;;
esac
for tool in cmake make cc pkg-config; do
  command -v "$tool" >/dev/null ||
    { echo "build: $tool is missing (scripts/deps.sh build installs it)" >&2; exit 1; }
done
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$dir"
log=$dir/build.log
targets=()
for t in "$@"; do targets+=(--target "$t"); done
what=${*:-everything}
start=$(date +%s)
# A make above this one (make demo, make test) would make every inner make
# announce each folder it enters; the log needs none of that.
unset MAKEFLAGS MAKELEVEL MFLAGS
step() {
  if [ "${RELISH_VERBOSE:-0}" = 1 ]; then
    "$@" 2>&1 | tee -a "$log"
    return "${PIPESTATUS[0]}"
  fi
  "$@" >>"$log" 2>&1
}
: >"$log"
# shellcheck disable=SC2206 # a list of words
conf+=(${RELISH_CMAKE_ARGS:-})
if ! step cmake -S . -B "$dir" "${conf[@]}" ||
   ! step cmake --build "$dir" -j "$jobs" "${targets[@]}"; then
  echo "build: building $what in $dir failed; the last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo "build: $what in $dir, $(( $(date +%s) - start )) s (log: $log)"
