#!/usr/bin/env bash
# test.sh - the README's second command (and .ci/run's): install what is
# missing (scripts/deps.sh test), build everything with ASan+UBSan and
# -Werror in build/asan (scripts/build.sh test), run every test with ctest.
# Tests that cannot run here say why and count as skipped (ctest lists
# them at the end); inside a container that is the container tests, as
# podman cannot run nested.  `make test` runs this script.
# Usage: scripts/test.sh [--build-only] [CTEST ARGS...]   e.g. -R test_spec
# Env: JOBS (parallel jobs), TEST_BUILD (another build folder), CTEST_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
"$here/scripts/deps.sh" test
"$here/scripts/build.sh" test
[ "$build_only" = 1 ] && exit 0
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
cd "${TEST_BUILD:-build/asan}"
rc=0
# shellcheck disable=SC2086 # CTEST_ARGS is a list of words
ctest --output-on-failure -j "$jobs" ${CTEST_ARGS:-} "$@" || rc=$?
# ctest names the skipped tests; their own "SKIP: why" line says why.
log=Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q '^SKIP: ' "$log"; then
  echo "Why they were skipped:"
  awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 } /^SKIP: / { sub(/^SKIP: /, ""); print "\t " name ": " $0 }' "$log"
fi
exit "$rc"
