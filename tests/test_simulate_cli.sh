#!/usr/bin/env bash
# test_simulate_cli.sh - relish simulate's words on the shipped example
# trace (examples/trace/small.csv): --gpu-memory takes sizes (32G is 32768
# MiB, "lots" is exit 2), each policy's ratio to exclusive says which way it
# goes and agrees with --json, the header says what the pairs count is,
# --out says what it wrote, and the utilisation plot has one panel per
# policy on the smoothed series with the cluster in its title.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-simcli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$RELISH_SRC/examples/trace/small.csv

"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --json >"$work/g.json"
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32768 --json >"$work/m.json"
cmp -s "$work/g.json" "$work/m.json" || fail "--gpu-memory 32G and 32768 differ"
set +e
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory lots 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'expected a size like 32GiB' "$work/err" || fail "--gpu-memory lots: exit $rc $(cat "$work/err")"
set +e
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --order fair --half-life-s -1 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q -- '--half-life-s: expected a number >= 0, got "-1"' "$work/err" ||
  fail "--half-life-s -1: exit $rc $(cat "$work/err")"

"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --out "$work/out" >"$work/table" 2>"$work/err"
grep -q "co-location: measured speeds for [0-9]* ordered pairs of the trace's configurations" "$work/table" ||
  fail "header: $(head -1 "$work/table")"
grep -q "^relish simulate: wrote $work/out/: summary.json" "$work/err" || fail "--out: $(cat "$work/err")"
$PY - "$work/table" "$work/g.json" <<'P'
import json, re, sys
table = open(sys.argv[1]).read()
pol = json.load(open(sys.argv[2]))["policies"]
for p in ("pack", "relish", "tiresias", "gandiva"):
    m = re.search(r"^%s vs exclusive: %s makespan ([0-9.]+)x exclusive's \((the same|\d+%% (longer|shorter))\), "
                  r"mean JCT ([0-9.]+)x exclusive's \((the same|\d+%% (longer|shorter))\)" % (p, p), table, re.M)
    assert m, (p, table[-600:])
    r = pol[p]["makespan_s"] / pol["exclusive"]["makespan_s"]
    assert abs(float(m.group(1)) - r) < 0.006, (m.group(1), r)
    word = m.group(3) or "same"
    assert word == ("longer" if r > 1.005 else "shorter" if r < 0.995 else "same"), (word, r)
print("ok: ratios")
P
gp=$work/out/plots.gp
grep -q "multiplot layout 5,1 title 'GPU compute and memory in use, 8 GPUs x 32768 MiB" "$gp" || fail "plots.gp: $(head -8 "$gp")"
[ "$(grep -c "^plot 'series_.*_smooth.csv'" "$gp")" = 5 ] || fail "not one panel per policy: $(cat "$gp")"
for p in exclusive pack relish tiresias gandiva; do
  n=$(wc -l <"$work/out/series_${p}_smooth.csv")
  [ "$n" -ge 2 ] && [ "$n" -le 301 ] || fail "series_${p}_smooth.csv: $n lines"
done
if command -v gnuplot >/dev/null; then
  [ -s "$work/out/utilisation.png" ] && [ -s "$work/out/jct_cdf.png" ] || fail "no PNGs: $(cat "$work/out/gnuplot.log")"
fi
echo "ok: simulate's words, units and plot"
