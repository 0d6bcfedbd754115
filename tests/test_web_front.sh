#!/usr/bin/env bash
# test_web_front.sh - the dashboard's Pareto front in a real browser
# (Debian's chromium driven by playwright-core, as tests/test_web.sh)
# against a real `relish serve`: two experiments of a real trial program
# (awk printing its objectives), one with two objectives and a constraint,
# one with three objectives.  tests/web/front.mjs checks what a person
# would: the front card is shown, the scatter draws every trial with values
# with the API's front highlighted (its count equal to the API's, the
# infeasible ones apart), the three-objective one draws parallel
# coordinates with one line per trial, and an experiment of one objective
# shows no front card.  Also `relish best` prints the same front, and
# `relish export` marks the same trials.
# Skipped, saying why, without chromium, node or root (useradd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/web-lib.sh"
serve_lib_init webfront
web_need_browser
serve_users 1
printf "%s %s\n" "$(head -c 18 /dev/urandom | od -An -tx1 | tr -d " \n")" "$U1" >"$work/tokens"
chmod 600 "$work/tokens"
TOKEN=$(awk 'NR==1 {print $1}' "$work/tokens")
printf 'tokens: %s\n' "$work/tokens" >"$work/config.yaml"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
serve_start --listen 127.0.0.1:0 --config "$work/config.yaml" --devices "$work/devices.yaml"
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the log"
BASE=http://127.0.0.1:$port

# f1 = x, f2 = (1 + y)(1 - sqrt(x)) (a ZDT-like trade-off), f3 = y; c =
# x + y - 1.2 must stay <= 0.
front_spec() { # FILE NAME OBJECTIVES-YAML CONSTRAINTS-YAML
  cat >"$1" <<S
name: $2
objective: $3
$4
search:
  algorithm: random
  seed: 11
  max_trials: 24
  max_concurrent: 4
  space:
    x: {type: uniform, low: 0, high: 1}
    y: {type: uniform, low: 0, high: 1}
trial:
  command: ["/usr/bin/awk", "BEGIN {{ x = {x}; y = {y}; printf \"RELISH epoch=1 f1=%.6f f2=%.6f f3=%.6f c=%.6f\\\\n\", x, (1 + y) * (1 - sqrt(x)), y, x + y - 1.2 }}"]
  resources: {memory: 32MiB, cpus: 0.5}
S
  chmod 644 "$1"
}
front_spec "$work/two.yaml" "web-front2-$RANDOM" "[{metric: f1, mode: min}, {metric: f2, mode: min}]" \
  "constraints: [{metric: c, max: 0}]"
front_spec "$work/three.yaml" "web-front3-$RANDOM" \
  "[{metric: f1, mode: min}, {metric: f2, mode: min}, {metric: f3, mode: min}]" ""
front_spec "$work/one.yaml" "web-front1-$RANDOM" "{metric: f1, mode: min}" ""
TWO=$(as "$U1" "$R" submit two.yaml | awk '{print $1}')
THREE=$(as "$U1" "$R" submit three.yaml | awk '{print $1}')
ONE=$(as "$U1" "$R" submit one.yaml | awk '{print $1}')
[ -n "$TWO" ] && [ -n "$THREE" ] && [ -n "$ONE" ] || fail "submit printed no ids"
ended() { for e in "$TWO" "$THREE" "$ONE"; do api "/api/v1/experiments/$e" | grep -q '"status":"done"' || return 1; done; }
wait_for 120 ended || fail "the experiments did not end: $(api /api/v1/experiments)"

# the CLI says the same front as the API
api "/api/v1/experiments/$TWO/front" >"$work/front2.json"
n_front=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["front"]))' "$work/front2.json")
[ "$n_front" -ge 1 ] || fail "the API's front is empty: $(cat "$work/front2.json")"
as "$U1" "$R" best --experiment "$(sed -n 's/^name: //p' "$work/two.yaml")" >"$work/best.out" ||
  fail "relish best: $(cat "$work/best.out")"
[ "$(grep -c ': trial [0-9]* (index' "$work/best.out")" -eq "$n_front" ] ||
  fail "relish best prints another front than the API's $n_front: $(cat "$work/best.out")"
grep -q "f1 = .* (min), f2 = .* (min)" "$work/best.out" || fail "relish best: no objectives: $(cat "$work/best.out")"
as "$U1" "$R" export --format csv --experiment "$(sed -n 's/^name: //p' "$work/two.yaml")" >"$work/export.csv"
python3 - "$work/export.csv" "$work/front2.json" <<'P' || fail "relish export marks other trials than the API's front"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
front = set(json.load(open(sys.argv[2]))["front"])
marked = {int(r["trial_id"]) for r in rows if r["front"] == "true"}
assert marked == front and len(rows) == 24, (marked, front, len(rows))
assert any(r["feasible"] == "false" for r in rows), "no infeasible trial"
P

BASE=$BASE PLAYWRIGHT=$PLAYWRIGHT TOKEN=$TOKEN TWO=$TWO THREE=$THREE ONE=$ONE \
  SHOTS=${RELISH_WEB_SHOTS:-$work} timeout 180 node "$RELISH_SRC/tests/web/front.mjs" ||
  fail "the browser checks failed (above)"
echo "test_web_front: ok"
