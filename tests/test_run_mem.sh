#!/usr/bin/env bash
# test_run_mem.sh - the memory policy end to end on a 1 GiB host (a devices
# file): only a measurement fails a trial, and a failed trial never leaves
# the run hanging (issue 14, items 3 and 4).
#   estimate  a trial whose measured peak (~812 MiB) plus relish's headroom
#             (x1.2 + 64 MiB = ~1040 MiB) is more than the host: its next
#             segment runs alone on the whole host and completes (it used to
#             fail with "no device can ever hold its segment");
#   declared  trials declaring 2 GiB on the 1 GiB host fail before running,
#             named by their id, and the run ends (exit 1: no trial has a
#             value) instead of idling until killed;
#   growing   a trial touching 1.5 GiB, declared 64 MiB: re-placed larger,
#             then alone, and failed only by running out of memory alone on
#             the empty host; the run ends.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-mem-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
printf 'host:\n  memory: 1GiB\n  cpus: 2\n' >"$work/devices.yaml"

spec() { # NAME TRIALS EXTRA-ARGS RESOURCES
	cat <<S
name: $1
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: $2, max_concurrent: $2, space: {x: {type: uniform, low: 0, high: 1}}}
schedule: {algorithm: none, resource: epoch, max: 2, segment: 1}
trial:
  command: ["$RELISH_BUILD/ctrial", "--x", "{x}", "--y", "1"$3]
  resources: $4
S
}

# run NAME: relish run with a bound; a run still going after it has hung.
run() {
	set +e
	timeout 60 "$RELISH" run "$work/$1.yaml" --db "$work/$1.db" --devices "$work/devices.yaml" \
	  >"$work/$1.out" 2>"$work/$1.err"
	rc=$?
	set -e
	[ $rc -ne 124 ] || fail "$1: relish run still running after 60 s (hung): $(tail -3 "$work/$1.err")"
}

# ---- estimate above the host: runs alone ------------------------------------
spec estimate 1 ', "--alloc-mb", "806", "--sleep-ms", "700"' "{cpus: 0.5}" >"$work/estimate.yaml"
run estimate
[ $rc -eq 0 ] || fail "estimate: exit $rc: $(tail -3 "$work/estimate.err")"
"$PY" - "$work/estimate.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = db.execute("SELECT seq, status, mem_reserved_mib, peak_mem_mib, basis FROM segments ORDER BY seq").fetchall()
t = db.execute("SELECT status, error FROM trials").fetchall()
if t != [("completed", None)] or len(s) != 2:
    sys.exit("FAIL: estimate: trial %s segments %s" % (t, s))
# The first segment (unknown shape) ran alone and measured the peak; with
# the headroom the second needs more than the host, so it runs alone too.
if s[0][3] * 1.2 + 64 <= 1024 or any(x[1:3] != ("completed", 1024) or x[4] != "exclusive" for x in s):
    sys.exit("FAIL: estimate: segments %s" % (s,))
P

# ---- declared more than the host: failed at once, the run ends ----------------
spec declared 2 "" "{memory: 2GiB, cpus: 0.5}" >"$work/declared.yaml"
run declared
[ $rc -eq 1 ] || fail "declared: exit $rc (expected 1: no trial produced a value): $(tail -3 "$work/declared.err")"
"$PY" - "$work/declared.db" "$work/declared.err" <<'P'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
err = open(sys.argv[2]).read()
t = db.execute("SELECT id, idx, status, error FROM trials ORDER BY idx").fetchall()
want = "no device can ever hold its segment: it declares 2048 MiB, more than any host device has (1024 MiB)"
if len(t) != 2 or any(r[2] != "failed" or r[3] != want for r in t):
    sys.exit("FAIL: declared: trials %s" % (t,))
if db.execute("SELECT count(*) FROM segments").fetchone()[0] != 0:
    sys.exit("FAIL: declared: a segment ran")
if db.execute("SELECT status FROM experiments").fetchone()[0] != "done":
    sys.exit("FAIL: declared: experiment not done")
# Progress names trials by id (1, 2), as relish trials does, never by index 0.
for tid, idx, _, _ in t:
    if "declared: trial %d failed: %s" % (tid, want) not in err:
        sys.exit("FAIL: declared: no failure line for trial %d in:\n%s" % (tid, err))
if re.search(r"trial 0 failed", err):
    sys.exit("FAIL: declared: a trial named by its index:\n%s" % err)
P
"$RELISH" status --db "$work/declared.db" >"$work/status" || fail "status exit $?"
grep -Eq '^declared +[^ ]+ +done +2 +0 +0 +0 +2 ' "$work/status" || fail "declared: status: $(cat "$work/status")"

# ---- memory that keeps growing: bounded, failed by a measurement ----------------
spec growing 1 ', "--alloc-mb", "1536", "--sleep-ms", "400"' "{memory: 64MiB, cpus: 0.5}" >"$work/growing.yaml"
run growing
[ $rc -eq 1 ] || fail "growing: exit $rc: $(tail -3 "$work/growing.err")"
"$PY" - "$work/growing.db" <<'P'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
s = db.execute("SELECT status, mem_reserved_mib, basis FROM segments ORDER BY seq").fetchall()
t = db.execute("SELECT status, error FROM trials").fetchall()
if len(t) != 1 or t[0][0] != "failed" or t[0][1] != "out of memory alone on an empty device (1024 MiB)":
    sys.exit("FAIL: growing: trial %s segments %s" % (t, s))
# Raised at least x1.5 each time, alone after three in a row, then failed:
# at most four attempts, the last alone on the whole host.
# Each stop is relish's own limit (the process executor's, from the
# reservation): stored over_reservation, not oom (issue 30, item 8).
if not (2 <= len(s) <= 4) or any(x[0] != "over_reservation" for x in s) or s[-1][1:] != (1024, "exclusive"):
    sys.exit("FAIL: growing: segments %s" % (s,))
if any(b[1] * 1.5 > a[1] for a, b in zip(s[1:-1], s[:-2])):
    sys.exit("FAIL: growing: raises %s" % (s,))
if db.execute("SELECT status FROM experiments").fetchone()[0] != "done":
    sys.exit("FAIL: growing: experiment not done")
P
echo "test_run_mem: ok"
