#!/usr/bin/env bash
# test_serve_said.sh - under relish serve, the submitter reads what
# `relish run` would have printed (issue 30 item 7): a user submits an
# experiment whose trial prints its metrics with a colon
# ("relish: epoch=1 val_acc=0.5", a near miss) and so never reports its
# objective; its first trials fail alike and it stops failing fast.
#   - `relish submit --follow` prints the near-miss warning and the
#     fail-fast explanation (it used to end with "colon: failed" and
#     "has no trial with a value of val_acc yet"), exit 1;
#   - `relish status` prints them below its table, `status --json` has
#     them as notes;
#   - SIGTERM then stops the service gracefully: exit 0, no level=error
#     (it ended "level=error ... rc=-989", exit 1, after a user's
#     experiment had failed).
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init said
serve_users 1
printf 'host:\n  memory: 1GiB\n  cpus: 2\n' >"$work/devices.yaml"
cat >"$work/colon.sh" <<'T'
#!/bin/sh
echo "relish: epoch=1 val_acc=0.5"
T
chmod 755 "$work/colon.sh"
cat >"$work/colon.yaml" <<S
name: colon
objective: {metric: val_acc, mode: max}
search: {algorithm: random, seed: 1, max_trials: 10, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["$work/colon.sh"]
  resources: {memory: 32MiB, cpus: 0.5}
  retries: 0
S
chmod 644 "$work/colon.yaml"
serve_start --devices "$work/devices.yaml"

rc=0
timeout 120 env RELISH_SERVER="unix:$sock" setpriv --reuid="$U1" --regid="$(id -g "$U1")" --init-groups \
  "$R" submit "$work/colon.yaml" --follow >"$work/follow.out" 2>"$work/follow.err" || rc=$?
cat "$work/follow.out" "$work/follow.err"
[ "$rc" = 1 ] || fail "submit --follow: exit $rc, want 1"
grep -q 'colon: trial [0-9]*: "relish: epoch=1 val_acc=0.5" is not a metric line' "$work/follow.out" ||
  fail "submit --follow did not pass on the near-miss warning"
grep -q 'colon: stopped: the first 3 trials failed the same way before any segment completed' "$work/follow.out" ||
  fail "submit --follow did not say why the experiment stopped"

as "$U1" "$R" status >"$work/status.out" || fail "status"
cat "$work/status.out"
grep -q '^what the experiments said:' "$work/status.out" || fail "status does not show what was said"
grep -q '^  colon: stopped: the first 3 trials failed the same way' "$work/status.out" ||
  fail "status does not say why colon stopped"
grep -q '^  colon: trial [0-9]*: "relish: epoch=1 val_acc=0.5" is not a metric line' "$work/status.out" ||
  fail "status does not show the near-miss warning"
as "$U1" "$R" status --json | /usr/bin/python3 -c '
import json, sys
e = json.load(sys.stdin)[0]
kinds = [n["kind"] for n in e["notes"]]
assert "trial.warning" in kinds and "experiment.failed" in kinds, e["notes"]' || fail "status --json notes"

kill -TERM "$spid"
rc=0
for _ in $(seq 600); do kill -0 "$spid" 2>/dev/null || break; sleep 0.05; done
wait "$spid" || rc=$?
spid=
[ "$rc" = 0 ] || fail "relish serve exited $rc after SIGTERM: $(grep 'serve.stopped' "$work/serve.log")"
! grep -q 'level=error' "$work/serve.log" || fail "the service logged an error: $(grep 'level=error' "$work/serve.log")"
echo "ok: the submitter reads the warning and the reason; SIGTERM after a failed experiment exits 0"
