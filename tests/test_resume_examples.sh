#!/usr/bin/env bash
# test_resume_examples.sh - every example trial resumes without failing
# (issue 30 item 1).  Each examples/*/*.yaml that runs on the host
# (quickstart, digits, digits-cnn, digits-mlp, ctrial) is shortened as in
# test_examples.sh and run with `relish run`, which is interrupted again and
# again, alternately with kill -9 and with SIGINT (Ctrl-C), each time at
# one of two kinds of moment chosen at random:
#   end   the instant the store holds a running segment's objective at its
#         end (resource_to): the trial printed its last line and saves its
#         checkpoint or exits, and relish has not seen it end.  Resumed, the
#         segment re-runs over a range its checkpoint may already cover:
#         the case a plain trial script used to fail ("ended without
#         reporting the objective");
#   any   a random moment (0-1.5 s) after a segment started.
# Both are waited for as events (the store polled every 10 ms), never as
# fixed sleeps.  Then the same command runs to the end.  Asserted: it
# exits 0 with a best trial, no trial failed and no segment failed; each
# example is interrupted until 3 (6) interruptions hit running segments,
# in a fresh experiment whenever one ended between two misses.  RELISH_TEST_SEED=N repeats a run's choices (the seed is printed).
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-resume-ex-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
$PY -c 'import torch, sklearn' 2>/dev/null ||
  fail "python3-torch and python3-sklearn are needed for the examples (scripts/deps.sh test)"
seed=${RELISH_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "seed $seed (RELISH_TEST_SEED=$seed repeats these choices)"
RANDOM=$seed

# The watcher: waits for the chosen moment in the store, then signals relish.
cat >"$work/watch.py" <<'P'
import os, signal, sqlite3, sys, time
db, pid, kind, delay, sig = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
def alive():
    try:
        os.kill(pid, 0)
        return open("/proc/%d/stat" % pid).read().split(")")[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
# A running segment that reported its objective at its end (kind end), or
# any running segment (kind any, then the random delay).
end_sql = ("SELECT count(*) FROM segments s JOIN metrics m ON m.segment_id = s.id "
           "WHERE s.status = 'running' AND m.name = ? AND m.resource >= s.resource_to")
any_sql = "SELECT count(*) FROM segments WHERE status = 'running' AND pid > 0"
metric = sys.argv[6]
deadline = time.time() + 120
while time.time() < deadline and alive():
    try:
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        n = c.execute(end_sql, (metric,)).fetchone()[0] if kind == "end" else \
            c.execute(any_sql).fetchone()[0]
        c.close()
    except sqlite3.Error:
        n = 0
    if n:
        if kind == "any":
            time.sleep(delay)
        if alive():
            os.kill(pid, signal.SIGKILL if sig == "KILL" else signal.SIGINT)
            print("hit")
        else:
            print("missed")
        sys.exit(0)
    time.sleep(0.01)
print("missed")
P

# First the rule itself, by hand (docs/trials.md, "Checkpoints"): after a
# segment 0-3 that saved its checkpoint, segment 1-3 again (what a resumed
# relish runs when it was killed before it saw 0-3 end, with the trial's
# last boundary at 1) trains nothing and prints the lines of 2 and 3 again.
rule() { # NAME args|env COMMAND...: run 0-3, then 1-3, on one checkpoint folder
  local n=$1 how=$2; shift 2
  local ck=$work/rule-$n
  mkdir -p "$ck"
  seg() { # FROM TO COMMAND...
    local f=$1 t=$2 extra=()
    shift 2
    [ "$how" = args ] && extra=(--from "$f" --to "$t" --checkpoint "$ck")
    RELISH_MODE=oneshot RELISH_RESOURCE_FROM=$f RELISH_RESOURCE_TO=$t RELISH_CHECKPOINT_DIR=$ck \
      RELISH_PARAMS='{}' "$@" "${extra[@]}"
  }
  local cmd=("$@")
  seg 0 3 "${cmd[@]}" >"$ck.first" 2>"$ck.err" ||
    fail "$n: segment 0-3 by hand failed: $(tail -3 "$ck.err")"
  seg 1 3 "${cmd[@]}" >"$ck.again" 2>"$ck.err" ||
    fail "$n: segment 1-3 again by hand failed: $(tail -3 "$ck.err")"
  grep -E '^RELISH epoch=(2|3) ' "$ck.first" >"$ck.want" || true
  [ "$(wc -l <"$ck.want")" = 2 ] || fail "$n: segment 0-3 printed: $(cat "$ck.first")"
  cmp -s "$ck.want" <(grep '^RELISH epoch=' "$ck.again") ||
    fail "$n: 1-3 over a checkpoint at 3 printed $(grep -c '^RELISH' "$ck.again") metric lines, not the lines of 2 and 3: $(cat "$ck.again")"
  echo "ok $n: a re-run over its checkpoint prints its lines again"
}
rule quickstart args $PY "$RELISH_SRC/examples/quickstart/train.py"
rule digits env $PY "$RELISH_SRC/examples/digits/train.py"
rule ctrial env "$RELISH_BUILD/ctrial"

total_hits=0 total_tries=0 ran=0
for spec in "$RELISH_SRC"/examples/*/*.yaml; do
  name=$(basename "$spec" .yaml)
  grep -Eq '^ *executor: *(slurm|podman|docker)' "$spec" && continue
  "$RELISH" validate --json "$spec" >"$work/$name.full.json" || fail "$name: validate --json"
  tries=3
  case "$name" in quickstart|ctrial) tries=6 ;; esac
  $PY - "$work/$name.full.json" "$work/$name.json" "$RELISH_BUILD" <<'P'
import json, os, sys
s = json.load(open(sys.argv[1]))
s["search"]["max_trials"] = 6
s["search"]["max_concurrent"] = 2
s["search"]["n_startup"] = 3
sc = s["schedule"]
if sc["algorithm"] != "none":
    sc["max"] = min(sc["max"], 9)
    sc["min"] = min(sc["min"], sc["max"])
t = s["trial"]
if "build/release/ctrial" in t["command"][0]:
    t["command"][0] = os.path.join(sys.argv[3], "ctrial")
    # its 20 ms epochs end the whole run before a first interruption
    c = t["command"]
    if "--sleep-ms" in c:
        c[c.index("--sleep-ms") + 1] = "300"
    s["search"]["max_trials"] = 12
t["timeout"] = 300
t["fail_fast"] = 0          # every failure stays visible as a failed trial
t["retries"] = 0            # and none is hidden by a retry
json.dump(s, open(sys.argv[2], "w"), indent=2)
P
  metric=$($PY -c 'import json,sys; o = json.load(open(sys.argv[1]))["objective"]; print((o[0] if isinstance(o, list) else o)["metric"])' "$work/$name.json")
  sname=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$work/$name.json")
  # finish DB: the same command runs the experiment to its end; it has a
  # best trial, and no trial or segment failed on the way.
  finish() {
    local db=$1 rc=0
    "$RELISH" run "$work/$name.json" --db "$db" --devices "$work/devices.yaml" \
      >"$work/$name.final" 2>>"$work/$name.err" || rc=$?
    [ "$rc" = 0 ] || fail "$name: the last relish run exited $rc: $(tail -5 "$work/$name.err")"
    grep -q "^$sname: trial [0-9]* (index" "$work/$name.final" ||
      fail "$name: no best trial: $(cat "$work/$name.final")"
    $PY - "$db" "$name" <<'P' || fail "$name: a trial failed after interruptions (above)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
bad = db.execute("SELECT t.id, s.resource_from, s.resource_to, s.status, s.message FROM segments s "
                 "JOIN trials t ON t.id = s.trial_id WHERE s.status IN ('failed', 'signaled', 'oom', 'over_reservation', 'timeout') "
                 "OR t.status = 'failed'").fetchall()
for r in bad:
    print("FAIL: %s: trial %s segment %s-%s %s: %s" % ((sys.argv[2],) + r), file=sys.stderr)
st = dict(db.execute("SELECT status, count(*) FROM trials GROUP BY status").fetchall())
lost = db.execute("SELECT count(*) FROM segments WHERE status IN ('lost', 'cancelled')").fetchone()[0]
print("  %s: trials %s, %d segments interrupted and re-run" % (sys.argv[2], st, lost))
sys.exit(1 if bad else 0)
P
  }
  # Interrupt until TRIES interruptions have hit running segments.  A
  # watcher that misses (the moment passed between two polls) and a run
  # that then ends by itself leave a finished experiment: it is checked
  # and the next interruptions start a new one in a fresh database, so a
  # miss costs a try, never the test.  At most 3 x TRIES tries.
  k=1 db=$work/$name.1.db hits=0 i=0
  while [ "$hits" -lt "$tries" ] && [ "$i" -lt $((3 * tries)) ]; do
    i=$((i + 1))
    kind=any; [ $((RANDOM % 2)) = 0 ] && kind=end
    sig=KILL; [ $((i % 2)) = 0 ] && sig=INT
    delay=$(printf '0.%03d' $((RANDOM % 1000)))
    delay=$($PY -c "print(1.5 * $delay)")
    "$RELISH" run "$work/$name.json" --db "$db" --devices "$work/devices.yaml" \
      >>"$work/$name.out" 2>>"$work/$name.err" &
    rp=$!
    pids+=("$rp")
    got=$($PY "$work/watch.py" "$db" "$rp" "$kind" "$delay" "$sig" "$metric")
    rc=0
    wait "$rp" || rc=$?
    when=$kind; [ "$kind" = any ] && when="any +${delay}s"
    echo "  $name: interruption $i: $sig at $when: $got (exit $rc)"
    [ "$got" = hit ] && hits=$((hits + 1))
    if [ "$got" = hit ] && [ "$sig" = INT ] && [ "$rc" != 130 ] && [ "$rc" != 0 ]; then
      fail "$name: relish run exited $rc after SIGINT (expected 130): $(tail -5 "$work/$name.err")"
    fi
    if [ "$got" = missed ] && [ "$rc" = 0 ]; then
      finish "$db"
      k=$((k + 1)) db=$work/$name.$k.db
    fi
  done
  finish "$db"
  [ "$hits" -ge "$tries" ] ||
    fail "$name: only $hits of $i interruptions hit running segments"
  echo "ok $name: $hits of $i interruptions hit running segments ($k experiments)"
  total_hits=$((total_hits + hits))
  total_tries=$((total_tries + tries))
  ran=$((ran + 1))
done
[ "$ran" -ge 5 ] || fail "only $ran example specs ran"
echo "ok: $ran examples resumed after $total_hits interruptions (seed $seed), no trial failed"
