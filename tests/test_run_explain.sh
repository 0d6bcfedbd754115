#!/usr/bin/env bash
# test_run_explain.sh - a user always knows what went wrong (src/live/
# explain.c, the engine's fail-fast, the resume path), against the real
# binary with Python trials:
#   crash     a trial raises ValueError: every failed segment's line quotes
#             the exception and names `relish logs N --db DB`; the end says in
#             words that 4 of 4 trials failed the same way (exit 1); the log
#             holds the traceback; a line "relish: epoch=1 val_acc=0.5" is
#             warned about once per trial, not once per segment;
#   fastfail  the same crash with the default trial.fail_fast (3): the
#             experiment stops after 3 failed trials of a budget of 20, and
#             says why and what to do; fail_fast: 2 stops after 2;
#   fixed     the advised path works: the spec fixed, the same command
#             starts anew (no segment had completed) and finishes (exit 0);
#   restart   a changed spec after completed segments is refused (exit 2)
#             naming --restart; with --restart it starts anew;
#   missing   the objective never printed: the reason names what the
#             segment did report ("it reported: accuracy") and the line
#             that missed the format (commas between pairs);
#   path      command ["trial.py"] with trial.py in the workdir: the error
#             says programs are looked up on PATH and suggests ./trial.py;
#   python    a venv's python3 first on PATH, the trial's module installed in
#             another venv only: the failure names the Python that ran and
#             the PATH it was found on (docs/trials.md, "Which Python"); the
#             same trial given the other venv's interpreter by path, or run
#             through `#!/usr/bin/env python3` with that venv first on
#             trial.env's PATH, completes.
set -euo pipefail
: "${RELISH:?path of the relish binary}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-explain-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
printf 'host:\n  memory: 2GiB\n  cpus: 4\n' >"$work/devices.yaml"

cat >"$work/trial.py" <<'P'
#!/usr/bin/python3
import os, sys
mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
print("starting", flush=True)
if mode == "crash":
    print("relish: epoch=1 val_acc=0.5", flush=True)
    raise ValueError("learning rate must be positive")
if mode == "missing":
    print("RELISH epoch=1, val_acc=0.9", flush=True)
    print("RELISH epoch=1 accuracy=0.5", flush=True)
    sys.exit(0)
print("RELISH epoch=1 val_acc=%s" % os.environ["RELISH_PARAM_X"], flush=True)
P
chmod +x "$work/trial.py"

# spec NAME MODE MAX_TRIALS [EXTRA TRIAL KEYS] [COMMAND]
spec() {
  cat >"$work/$1.yaml" <<S
name: $1
objective: {metric: val_acc, mode: max}
search: {algorithm: random, seed: 1, max_trials: $3, max_concurrent: 1,
         space: {x: {type: uniform, low: 0, high: 1}}}
trial:
  command: ${5:-["$PY", "trial.py", "$2"]}
  resources: {memory: 128MiB}
  retries: 1
${4:-}
S
}
run() { "$RELISH" run "$work/$1.yaml" --db "$work/$2.db" --devices "$work/devices.yaml" "${@:3}"; }
db_args="--db $work/c.db"

# ---- crash -----------------------------------------------------------------------
spec crash crash 4 "  fail_fast: 0"
set +e
run crash c >"$work/out" 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "crash: exit $rc, expected 1"
n=$(grep -c "failed on host .*: exit code 1: ValueError: learning rate must be positive (relish logs [0-9]* $db_args)" "$work/err" || true)
[ "$n" = 8 ] || fail "crash: $n segment lines quote the exception and relish logs, expected 8 (4 trials x 2 tries): $(cat "$work/err")"
grep -q "^relish run: crash: no trial finished with a value of its objective: 4 of 4 trials failed, all the same way: \"exit code 1: ValueError: learning rate must be positive\" (trial 1: relish logs 1 $db_args)$" "$work/err" ||
  fail "crash: no summary in words: $(tail -3 "$work/err")"
grep -q 'crash: done: 4 trials, 0 completed, 0 stopped, 4 failed, all the same way' "$work/err" ||
  fail "crash: done line: $(grep done "$work/err")"
warn=$(grep -c '"relish: epoch=1 val_acc=0.5" is not a metric line: the prefix is "RELISH " in capitals' "$work/err" || true)
[ "$warn" = 4 ] || fail "crash: $warn near-miss warnings, expected one per trial (4): $(cat "$work/err")"
"$RELISH" logs 1 --db "$work/c.db" >"$work/logs"
grep -q '^Traceback (most recent call last):' "$work/logs" || fail "crash: relish logs 1 lacks the traceback"
"$RELISH" trials --db "$work/c.db" --json >"$work/trials.json"
$PY - "$work/trials.json" <<'P'
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t) == 4 and all(x["status"] == "failed" for x in t), t
assert all(x["error"] == "exit code 1: ValueError: learning rate must be positive" for x in t), t
P
echo "ok: crash"

# ---- fastfail ----------------------------------------------------------------------
spec fastfail crash 20
set +e
run fastfail f >"$work/out" 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "fastfail: exit $rc, expected 1"
grep -q "^relish run: fastfail: the first 3 trials failed the same way before any segment completed: \"exit code 1: ValueError: learning rate must be positive\" (trial 1: relish logs 1 --db $work/f.db); nothing more was launched (trial.fail_fast is 3; 0 never stops)" "$work/err" ||
  fail "fastfail: message: $(tail -2 "$work/err")"
"$RELISH" trials --db "$work/f.db" --json >"$work/trials.json"
$PY -c 'import json,sys; t=json.load(open(sys.argv[1])); assert len(t) == 3 and all(x["status"] == "failed" for x in t), t' "$work/trials.json" ||
  fail "fastfail: not 3 failed trials"
"$RELISH" status --db "$work/f.db" --json >"$work/status.json"
$PY -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s[0]["status"] == "failed", s' "$work/status.json" ||
  fail "fastfail: experiment not marked failed"
spec fastfail2 crash 20 "  fail_fast: 2"
set +e
run fastfail2 f2 >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q 'the first 2 trials failed the same way' "$work/err" || fail "fail_fast 2: exit $rc: $(tail -1 "$work/err")"
echo "ok: fastfail"

# ---- fixed: the advised path -------------------------------------------------------
spec fastfail ok 5
run fastfail f >"$work/out" 2>"$work/err" || fail "fixed: exit $?: $(tail -3 "$work/err")"
grep -q '^fastfail: the spec changed and no segment had completed: 3 earlier trials discarded, starting anew$' "$work/err" ||
  fail "fixed: no starting-anew line: $(head -3 "$work/err")"
grep -q '^fastfail: trial ' "$work/out" || fail "fixed: no best: $(cat "$work/out")"
echo "ok: fixed"

# ---- restart ---------------------------------------------------------------------------
spec fastfail ok 6
set +e
run fastfail f >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "restart: a changed spec after completed segments: exit $rc, expected 2"
grep -q "already exists in $work/f.db with a different spec, and 5 of its trials completed segments under the old one; add --restart" "$work/err" ||
  fail "restart: message: $(cat "$work/err")"
run fastfail f --restart >"$work/out" 2>"$work/err" || fail "--restart: exit $?: $(tail -3 "$work/err")"
grep -q '^fastfail: --restart: 5 earlier trials discarded, starting anew$' "$work/err" || fail "--restart: $(head -2 "$work/err")"
"$RELISH" trials --db "$work/f.db" --json >"$work/trials.json"
$PY -c 'import json,sys; t=json.load(open(sys.argv[1])); assert len(t) == 6 and all(x["status"] == "completed" for x in t), t' "$work/trials.json" ||
  fail "--restart: not 6 new completed trials"
echo "ok: restart"

# ---- missing objective -------------------------------------------------------------
spec missing missing 2 "  fail_fast: 0"
set +e
run missing m >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "missing: exit $rc"
grep -q 'ended without reporting the objective "val_acc"; it reported: accuracy (1 line missed the format)' "$work/err" ||
  fail "missing: reason: $(cat "$work/err")"
grep -q '"RELISH epoch=1, val_acc=0.9" is not a metric line: name=value pairs are separated by spaces, not commas' "$work/err" ||
  fail "missing: no warning about the comma line: $(cat "$work/err")"
# It exited 0 but did not do its part: its segment failed, as its trial,
# not a completed segment beside a failed trial (relish logs, the API).
"$RELISH" logs 1 --db "$work/m.db" >"$work/logs" || fail "missing: relish logs"
grep -q '^==> trial 1 segment 0 \[0, [0-9.]*\] failed on host exit 0 ' "$work/logs" ||
  fail "missing: relish logs shows the segment as: $(grep '^==>' "$work/logs")"
[ "$("$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT group_concat(DISTINCT status) FROM segments").fetchone()[0])' "$work/m.db")" = failed ] ||
  fail "missing: a segment of a failed trial is stored as another status"
echo "ok: missing"

# ---- path ------------------------------------------------------------------------------
spec path ok 2 "" '["trial.py"]'
set +e
run path p >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "path: exit $rc"
grep -q "starting trial.py: no such file or directory: a program named without a '/' is looked up on PATH, not in trial.workdir: write \"./trial.py\"" "$work/err" ||
  fail "path: $(cat "$work/err")"
echo "ok: path"

# ---- python: which Python ran ----------------------------------------------------------
/usr/bin/python3 -m venv --without-pip "$work/has" || fail "python: venv"
/usr/bin/python3 -m venv --without-pip "$work/lacks" || fail "python: venv"
site=$("$work/has/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo 'VALUE = 0.5' >"$site/relish_test_dep.py"
cat >"$work/dep.py" <<'P'
#!/usr/bin/env python3
import relish_test_dep
print("RELISH epoch=1 val_acc=%s" % relish_test_dep.VALUE, flush=True)
P
chmod +x "$work/dep.py"
spec pyenv ok 1 "  fail_fast: 0" '["python3", "dep.py"]'
set +e
PATH="$work/lacks/bin:$PATH" run pyenv py >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "python: exit $rc"
grep -qF "exit code 1: ModuleNotFoundError: No module named 'relish_test_dep' (the Python that ran: $work/lacks/bin/python3; PATH=$work/lacks/bin:" "$work/err" ||
  fail "python: the failure does not name the Python that ran: $(cat "$work/err")"
grep -qF 'docs/trials.md, "Which Python")' "$work/err" || fail "python: no pointer to the docs: $(cat "$work/err")"
# Named by its path, the venv that has the module runs the trial.
spec pyenv2 ok 1 "" "[\"$work/has/bin/python3\", \"dep.py\"]"
PATH="$work/lacks/bin:$PATH" run pyenv2 py2 >/dev/null 2>"$work/err" || fail "python: by path: $(tail -3 "$work/err")"
# A script run through `#!/usr/bin/env python3`: the failure names the
# Python env found; with that venv first on trial.env's PATH it runs.
spec pyenv3 ok 1 "  fail_fast: 0" '["./dep.py"]'
set +e
PATH="$work/lacks/bin:$PATH" run pyenv3 py3 >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -qF "(the Python that ran: $work/lacks/bin/python3; PATH=" "$work/err" ||
  fail "python: through env: exit $rc: $(cat "$work/err")"
spec pyenv4 ok 1 "  env: {PATH: \"$work/has/bin:/usr/bin:/bin\"}" '["./dep.py"]'
PATH="$work/lacks/bin:$PATH" run pyenv4 py4 >/dev/null 2>"$work/err" || fail "python: trial.env PATH: $(tail -3 "$work/err")"
echo "ok: python"
