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
# Every headline figure, one direction (the first policy's over the
# other's), in words that agree, for each policy against exclusive and for
# relish against the best peer of each figure (issue 30 item 6: the peer
# line divided the other way and left out HPO-experiment time).
figs = [("makespan", "makespan_s"), ("mean JCT", "mean_jct_s"), ("p95 JCT", "p95_jct_s"),
        ("HPO experiment time", "mean_burst_jct_s"), ("queueing", "mean_queue_s")]
def check_line(line, me, peers):
    for words, key in figs:
        m = re.search(r"(?:: %s|,) %s ([0-9.]+)x (\w+)'s \((the same|\d+%% (longer|shorter))\)"
                      % (re.escape(me), re.escape(words)) if words == "makespan" else
                      r", %s ([0-9.]+)x (\w+)'s \((the same|\d+%% (longer|shorter))\)" % re.escape(words), line)
        assert m, (words, line)
        other = m.group(2)
        assert other in peers, (words, other, peers)
        r = pol[me][key] / pol[other][key]
        assert abs(float(m.group(1)) - r) < 0.006, (words, m.group(1), r)
        word = m.group(4) or "same"
        assert word == ("longer" if r > 1.005 else "shorter" if r < 0.995 else "same"), (words, word, r)
        yield words, other, r
for p in ("pack", "relish", "tiresias", "gandiva"):
    line = re.search(r"^%s vs exclusive: .*$" % p, table, re.M).group(0)
    list(check_line(line, p, ["exclusive"]))
line = re.search(r"^relish vs the best peer: .*$", table, re.M).group(0)
peers = [p for p in pol if p != "relish"]
comp = json.load(open(sys.argv[2]))["comparisons"]["relish_vs_best_peer"]
for (words, other, r), (_, key) in zip(check_line(line, "relish", peers), figs):
    best = min(pol[p][key] for p in peers)
    assert pol[other][key] == best, (words, other, "is not the best peer")
    k = {"makespan_s": "makespan", "mean_jct_s": "mean_jct", "p95_jct_s": "p95_jct",
         "mean_burst_jct_s": "hpo_experiment", "mean_queue_s": "queue"}[key]
    # (--json prints a ratio with 8 decimals: within 5e-9 of the table's)
    assert comp[k]["peer"] == other and abs(comp[k]["ratio"] - r) < 1e-8, (k, comp[k], other, r)
print("ok: ratios")
P
# The JCT CDF shows every job: its x range holds every value of the
# jct_cdf_*.csv it plots (a leftover xrange of the utilisation panels,
# [0:1] in days, clipped it to 0.1-1 h before).
$PY - "$work/out" <<'P'
import csv, glob, os, re, sys
gp = open(os.path.join(sys.argv[1], "plots.gp")).read()
cdf = gp[gp.index("set output 'jct_cdf.png'"):]
m = re.search(r"set xrange \[([0-9.e+-]+):([0-9.e+-]+)\]", cdf)
assert m, "the CDF has no x range of its own: " + cdf[:300]
lo, hi = float(m.group(1)), float(m.group(2))
vals = [float(r["jct_h"]) for f in glob.glob(os.path.join(sys.argv[1], "jct_cdf_*.csv"))
        for r in csv.DictReader(open(f))]
assert vals and lo <= min(vals) and max(vals) <= hi, (lo, hi, min(vals), max(vals))
print("ok: the CDF's x range %g-%g h holds every job (%g-%g h)" % (lo, hi, min(vals), max(vals)))
P
# --order all (issue 26 item 3): every peer in fifo, las and tiresias
# order, relish in its own; each pair is the very run that --order gives
# alone, the default-order runs are --json's "policies" as without it, and
# the summary names the best (peer, order) pair of each figure and relish
# against it, agreeing with --json.
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --order all >"$work/all.table"
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --order all --json >"$work/all.json"
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --policy gandiva,tiresias --order las \
  --json >"$work/las.json"
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --policy tiresias --json \
  --tiresias-quantum-s 0 >"$work/tq0.json"
set +e
"$RELISH" simulate --trace "$trace" --gpus 8 --gpu-memory 32G --order every 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'expected default, fifo, las, tiresias, fair or all, got "every"' "$work/err" ||
  fail "--order every: exit $rc $(cat "$work/err")"
$PY - "$work/all.table" "$work/all.json" "$work/g.json" "$work/las.json" "$work/tq0.json" <<'P'
import json, re, sys
table = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
plain = json.load(open(sys.argv[3]))["policies"]
las = json.load(open(sys.argv[4]))["policies"]
tq0 = json.load(open(sys.argv[5]))["policies"]["tiresias"]
peers = ("exclusive", "pack", "tiresias", "gandiva")
want = {"%s-%s" % (p, o) for p in peers for o in ("fifo", "las", "tiresias")} | {"relish-las"}
pairs = d["pairs"]
assert set(pairs) == want, sorted(pairs)
for k, r in pairs.items():
    assert k == "%s-%s" % (r["policy"], r["order"]), (k, r["policy"], r["order"])
rows = re.findall(r"^(exclusive|pack|relish|tiresias|gandiva) +(fifo|las|tiresias) ", table, re.M)
assert {"%s-%s" % r for r in rows} == want and len(rows) == len(want), rows
same = ("makespan_s", "mean_jct_s", "p95_jct_s", "mean_burst_jct_s", "oom_count", "segments")
for p in ("gandiva", "tiresias"):
    for k in same:
        assert pairs[p + "-las"][k] == las[p][k], (p, k, pairs[p + "-las"][k], las[p][k])
for p, r in plain.items():
    for k in same:
        assert d["policies"][p][k] == r[k], (p, k)
# the Tiresias peer preempts every 1800 s of service by default (its
# quantum), the others at --segment-s; 0 gives it --segment-s too
assert pairs["tiresias-tiresias"]["segment_s"] == 1800, pairs["tiresias-tiresias"]["segment_s"]
assert pairs["gandiva-las"]["segment_s"] == 3600 and tq0["segment_s"] == 3600
assert tq0["segments"] < pairs["tiresias-tiresias"]["segments"], (tq0["segments"], pairs["tiresias-tiresias"]["segments"])
figs = [("makespan", "makespan_s", "makespan"), ("mean JCT", "mean_jct_s", "mean_jct"),
        ("p95 JCT", "p95_jct_s", "p95_jct"), ("HPO experiment time", "mean_burst_jct_s", "hpo_experiment"),
        ("queueing", "mean_queue_s", "queue")]
best_line = re.search(r"^best \(peer, order\) pair: (.*)$", table, re.M)
vs_line = re.search(r"^relish vs the best \(peer, order\) pair: relish (.*)$", table, re.M)
assert best_line and vs_line, table[-1500:]
comp = d["comparisons"]
for words, key, jkey in figs:
    cands = {k: r for k, r in pairs.items() if r["policy"] != "relish"}
    best = min(r[key] for r in cands.values())
    m = re.search(r"(?:^|, )%s ([a-z]+-[a-z]+) ([0-9.]+) h" % re.escape(words), best_line.group(1))
    assert m, (words, best_line.group(1))
    assert cands[m.group(1)][key] == best, (words, m.group(1), "is not the best pair")
    assert abs(float(m.group(2)) - best / 3600) < 0.006, (words, m.group(2), best / 3600)
    bp = comp["best_pair"][jkey]
    assert pairs["%s-%s" % (bp["peer"], bp["order"])][key] == best and bp["value_s"] == best, (jkey, bp)
    r = pairs["relish-las"][key] / best
    m = re.search(r"(?:^|, )%s ([0-9.]+)x ([a-z]+-[a-z]+)'s \((the same|\d+%% (longer|shorter))\)"
                  % re.escape(words), vs_line.group(1))
    assert m and cands[m.group(2)][key] == best, (words, vs_line.group(1))
    assert abs(float(m.group(1)) - r) < 0.006, (words, m.group(1), r)
    word = m.group(4) or "same"
    assert word == ("longer" if r > 1.005 else "shorter" if r < 0.995 else "same"), (words, word, r)
    assert abs(comp["relish_vs_best_pair"][jkey]["ratio"] - r) < 1e-8, (jkey, comp["relish_vs_best_pair"][jkey])
print("ok: --order all, %d pairs, the best pair and relish against it" % len(pairs))
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
