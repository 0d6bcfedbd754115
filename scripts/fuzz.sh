#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets in tests/fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined) and run each for N seconds.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 30 s, every target)
#   e.g. scripts/fuzz.sh 60 contract_line devices
#
# Targets: every tests/fuzz/fuzz_T.c (spec, spec_amplify, contract_line,
# devices, config_json, trace, model, slurm_tools, container_ps,
# serve_config, serve_admit, api_routes, ...).  The project's sources (all of src/ but the
# CLI's main.c and the programs of their own, src/*/*_main.c) are compiled
# once into $FUZZ_OUT/obj with fuzzer instrumentation; each target links them.  Each run starts from the
# seeds, tests/fuzz/seeds/T/ (for spec: the spec test cases and the
# examples), and the committed regression inputs, tests/fuzz/regress/T/,
# which libFuzzer runs first, so a past crash that comes back fails at
# once.  The growing corpus and crash inputs stay under $FUZZ_OUT, never in
# the source tree.  Prints each target's executions and exits non-zero when
# a target found a crash (its input is named in the output; keep it as
# tests/fuzz/regress/T/NAME once fixed).
#
# Environment: FUZZ_OUT (default build/fuzz), FUZZ_OPT (default -O1;
# `make test` uses -O0, which compiles four times faster), FUZZ_JOBS
# (parallel compiles, default 2), CC (default clang).  `make test` runs
# every target for a few seconds through tests/test_fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    t=${f#tests/fuzz/fuzz_}
    targets+=("${t%.c}")
  done
fi
jobs=${FUZZ_JOBS:-2}

CC=${CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz.sh: $CC not found (apt-get install clang)" >&2; exit 1; }
out=${FUZZ_OUT:-build/fuzz}
pkgs="sqlite3 yaml-0.1 jansson libuv libmicrohttpd libcurl gsl"
# shellcheck disable=SC2086
read -r -a cflags <<<"-g ${FUZZ_OPT:--O1} -std=c11 -D_GNU_SOURCE -Isrc $(pkg-config --cflags $pkgs)"
# shellcheck disable=SC2086
read -r -a libs <<<"$(pkg-config --libs $pkgs) -lm -ldl -lpthread"
san=address,undefined

# Library objects, mirrored under build/fuzz/obj; rebuilt when the source or
# any header is newer than the object.
newest_h=$(find src -name '*.h' -newer "$out/.stamp" 2>/dev/null | head -1 || true)
[ -e "$out/.stamp" ] || newest_h=all
# Objects built with other flags (FUZZ_OPT, CC) are rebuilt.
mkdir -p "$out"
flags="$CC ${cflags[*]}"
[ "$(cat "$out/.flags" 2>/dev/null)" = "$flags" ] || newest_h=all
objs=()
running=0
while IFS= read -r src; do
  obj="$out/obj/${src#src/}"
  obj="${obj%.c}.o"
  objs+=("$obj")
  if [ -n "$newest_h" ] || [ ! -e "$obj" ] || [ "$src" -nt "$obj" ]; then
    mkdir -p "$(dirname "$obj")"
    "$CC" "${cflags[@]}" -fsanitize=fuzzer-no-link,$san -c "$src" -o "$obj" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  fi
done < <(find src -name '*.c' ! -path src/cli/main.c ! -name '*_main.c' | sort)
# The dashboard's files are generated at build time (cmake/web.cmake); the
# fuzz targets link an empty table of them.
printf '#include "web/web.h"\nconst web_asset web_assets[] = {{0, 0, 0, 0}};\nconst size_t web_n_assets = 0;\n' \
  >"$out/web_assets_none.c"
"$CC" "${cflags[@]}" -fsanitize=fuzzer-no-link,$san -c "$out/web_assets_none.c" -o "$out/obj/web_assets_none.o"
objs+=("$out/obj/web_assets_none.o")
wait
touch "$out/.stamp"
printf '%s' "$flags" >"$out/.flags"

status=0
for t in "${targets[@]}"; do
  [ -e "tests/fuzz/fuzz_$t.c" ] || { echo "fuzz.sh: no target tests/fuzz/fuzz_$t.c" >&2; exit 2; }
  bin="$out/bin/fuzz_$t"
  mkdir -p "$out/bin" "$out/corpus/$t" "$out/artifacts/$t"
  "$CC" "${cflags[@]}" -fsanitize=fuzzer,$san "tests/fuzz/fuzz_$t.c" "${objs[@]}" "${libs[@]}" -o "$bin"
  seeds=()
  case $t in spec*) seeds=(tests/spec_cases examples/quickstart) ;; esac
  for d in "tests/fuzz/seeds/$t" "tests/fuzz/regress/$t"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  log="$out/fuzz_$t.log"
  set +e
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" "$out/corpus/$t" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  corpus=$(find "$out/corpus/$t" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$t: ok, $runs runs in ${secs}s, coverage $cov, corpus $corpus"
  else
    status=1
    echo "fuzz_$t: CRASH (exit $rc) after $runs runs; see $log"
    grep -E 'ERROR|SUMMARY|Test unit written|deadly signal|abort' "$log" | head -5
  fi
done
exit $status
