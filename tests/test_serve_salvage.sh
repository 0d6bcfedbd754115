#!/usr/bin/env bash
# test_serve_salvage.sh - a segment's log, which its owner may write while
# no relish runs, read back at a restart in bounded memory (recover.c,
# salvage_metrics).  A real service (root) and a real user (useradd;
# skipped, saying why, where that is impossible): $U1's trial prints a
# metric line and sleeps; $U1 appends to its log a metric line the
# service never saw and then 200 MB without a newline; relish serve is
# killed (-9) and started again:
#   - the appended metric line is taken back into the store (salvage
#     still works);
#   - the restarted service listens, and its peak RSS stays within 64 MB
#     of the first service's (the whole line was read into memory before:
#     200 MB more, 852 MB for 400 MB in a review).
set -euo pipefail
. "$RELISH_SRC/tests/support/serve-lib.sh"
serve_lib_init serve-salvage
serve_users 1
printf 'host:\n  memory: 2GiB\n  cpus: 2\n' >"$work/devices.yaml"
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$spid/status"; }
cat >"$work/sleepy.sh" <<'T'
#!/bin/sh
echo "RELISH epoch=0.5 accuracy=0.7"
exec sleep 600
T
chmod 755 "$work/sleepy.sh"
cat >"$work/s.yaml" <<S
name: salvage
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, max_concurrent: 1,
         space: {x: {type: uniform, low: 0, high: 1}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["$work/sleepy.sh"]
  resources: {memory: 32MiB, cpus: 1}
S
chmod 644 "$work/s.yaml"

serve_start --devices "$work/devices.yaml"
as "$U1" "$R" submit s.yaml >/dev/null || fail "submit"
log=
for _ in $(seq 100); do
  log=$(ls "$work"/state/runs/salvage.*/trial-0/seg-0.log 2>/dev/null | head -1 || true)
  [ -n "$log" ] && grep -q 'accuracy=0.7' "$log" 2>/dev/null && break
  sleep 0.2
done
[ -n "$log" ] && grep -q 'accuracy=0.7' "$log" || fail "the trial's log never held its line"
[ "$(stat -c %U "$log")" = "$U1" ] || fail "the log is not $U1's: $(stat -c %U "$log")"
base=$(hwm_kib)
# the owner's own writes into the log, while the service runs
as "$U1" sh -c "echo 'RELISH epoch=0.75 accuracy=0.8' >>'$log' && head -c 200000000 /dev/zero | tr '\\0' x >>'$log'"
# the service and the trial killed: at the restart the segment is lost,
# and what its log holds is taken back
kill -9 "$spid"
wait "$spid" 2>/dev/null || true
pkill -9 -u "$U1" || true
: >"$work/serve.log"
serve_start --devices "$work/devices.yaml"
wait_for 60 grep -q 'event=serve.resumed' "$work/serve.log"
after=$(hwm_kib)
echo "salvage: peak RSS $((base / 1024)) MiB before; after a restart with 200 MB of one line in the log $((after / 1024)) MiB"
curl -sf --max-time 5 --unix-socket "$sock" http://relish/healthz >/dev/null || fail "the restarted service does not answer"
[ $((after - base)) -lt 65536 ] || fail "the log's 200 MB line grew the restarted service's peak RSS by $(((after - base) / 1024)) MiB"
rows=$(sqlite3 "file:$work/state/relish.db?mode=ro" "SELECT count(*) FROM metrics WHERE name = 'accuracy' AND resource = 0.75 AND value = 0.8")
[ "$rows" = 1 ] || fail "the metric line appended to the log was not taken back ($rows rows)"
echo "salvage: the appended metric line was taken back"
as "$U1" "$R" cancel salvage >/dev/null 2>&1 || true
serve_stop
