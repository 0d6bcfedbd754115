#!/usr/bin/env bash
# bench_web.sh - the dashboard at N trials (default 10,000): a finished run
# written through the real store (tests/support/mkbig, from the test
# build), shown by `relish serve --read-only` of BUILD (release), measured
# in Debian's chromium with playwright-core (tests/web/scale.mjs): the
# experiment page's time until every trial is drawn (median of LOADS=5
# fresh loads), the table's next page and filter, the devices timeline;
# then the API answers behind it (median of 5 with curl) and the sizes of
# the embedded files.  Figures only, no pass mark (docs/benchmarks.md).
# Usage: bench/bench_web.sh [BUILD] (default build/release); TEST_BUILD
# (default build/asan) provides mkbig and playwright-core.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build/release}
TB=${TEST_BUILD:-build/asan}
N=${N:-10000}
for f in "$BUILD/relish" "$TB/mkbig" "$TB/web/node_modules/playwright-core/index.mjs" /usr/bin/chromium; do
  [ -e "$f" ] || { echo "bench_web: $f is missing (make build and make test-build first)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/relish-bench-web-XXXXXX)
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$work"' EXIT
t0=$(date +%s)
"$TB/mkbig" "$work/big.db" "$N" >"$work/mk.out"
echo "bench_web: $(cat "$work/mk.out") written in $(( $(date +%s) - t0 )) s; database $(du -h "$work/big.db" | cut -f1)"
"$BUILD/relish" serve --read-only --db "$work/big.db" --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q 'addr=127' "$work/serve.log" && break; sleep 0.1; done
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
BASE=http://127.0.0.1:$port PLAYWRIGHT=$PWD/$TB/web/node_modules/playwright-core/index.mjs EXP=1 N=$N \
  LOADS=${LOADS:-5} node tests/web/scale.mjs
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for path in "api/v1/experiments/1/trials" "api/v1/experiments/1/curves?limit=40" \
            "api/v1/timeline?span=3600" "api/v1/queue" "metrics"; do
  ms=$(for _ in 1 2 3 4 5; do curl -s -o "$work/body" -w '%{time_total}\n' "http://127.0.0.1:$port/$path"; done |
       median | awk '{printf "%.0f", $1 * 1000}')
  echo "bench_web: GET /$path: median $ms ms, $(wc -c <"$work/body") bytes"
done
sizes=$(for f in web/src/*; do printf '%s %s\n' "$(wc -c <"$f")" "$(basename "$f")"; done)
own=$(printf '%s\n' "$sizes" | awk '{s += $1} END {print s}')
up=$(wc -c <"$TB/web/node_modules/uplot/dist/uPlot.iife.min.js")
echo "bench_web: embedded: the page's own files $own bytes ($(ls web/src | wc -l) files), uPlot $up bytes (+ css)"
echo "bench_web: load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
