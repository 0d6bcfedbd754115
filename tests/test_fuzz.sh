#!/usr/bin/env bash
# test_fuzz.sh - every libFuzzer target in tests/fuzz/ fuzzes for a few
# seconds (RELISH_FUZZ_SECONDS, default 2 each), starting from its seeds and
# its committed regression inputs (tests/fuzz/regress/T/, run first), with
# clang's libFuzzer, ASan and UBSan (scripts/fuzz.sh; objects at -O0 under
# the build folder, reused by later runs).  Without clang and libFuzzer
# (packages clang, libclang-rt-14-dev) it is skipped, visibly: exit 77,
# which ctest shows as "Skipped".  The seeds and regression inputs are
# replayed either way, without libFuzzer, by the fuzz_replay_T tests.
set -euo pipefail
src=${RELISH_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
build=${RELISH_BUILD:-$src/build/asan}
CC=${CC:-clang}
probe=$(mktemp -d /tmp/relish-fuzz-probe-XXXXXX)
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
  'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
  >"$probe/p.c"
if ! command -v "$CC" >/dev/null ||
   ! "$CC" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
  [ -s "$probe/err" ] && head -3 "$probe/err" >&2
  echo "SKIP: $CC with libFuzzer is not available (apt-get install clang libclang-rt-14-dev;" \
       "scripts/deps.sh test does); fuzz_replay_* still replay the seeds and regression inputs"
  exit 77
fi
cd "$src"
FUZZ_OUT="$build/fuzz" FUZZ_OPT=-O0 CC="$CC" scripts/fuzz.sh "${RELISH_FUZZ_SECONDS:-2}"
