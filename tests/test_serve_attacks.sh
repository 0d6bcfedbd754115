#!/usr/bin/env bash
# test_serve_attacks.sh - relish serve attacked by one of its users: a real
# service (root), real Unix users made for the test (useradd; skipped,
# saying why, where that is impossible): $U1 is the attacker, $U2 the
# victim.  Each case is one attack of issue 25 and asserts that it fails
# AND that the victim's experiment, submitted just before, runs to its end
# with every trial completed.  Cases (all by default; ATTACKS="env grants"
# picks some):
#   env      trial.env LD_PRELOAD (and ASAN_OPTIONS, so that the sanitized
#            test build's helper would obey it too): the library is loaded
#            by the trial, as the attacker, never by anything running as
#            root (relish-runas starts with an empty environment and
#            applies the trial's after setuid)
#   grants   allow: lists one grant; 64 copies of it (or 64 allowed mounts)
#            before SYS_ADMIN, user root, new privileges and / mounted
#            read-write: refused (a capability named twice at parse time,
#            400; every grant checked, 403 naming what is not allowed)
#   alias    a 108 KB spec whose aliases name one 100 KB scalar 2,000 times
#            (200 MB expanded): refused 400 by the parser's byte budget,
#            the service's peak RSS (ASan's build) grows by less than
#            128 MB (a read of 1,000,000 rows took ~0.9 GB before)
#   grid     a grid axis of 2^24 values (uniform, step 1): refused 400 naming
#            search.space.x.step and the cap; the same axis under random
#            search (accepted: a grid size is arithmetic, never enumerated)
#            submitted over and over while the victim submits: each of the
#            victim's submits answers within 3 s (10.4 s before: the loop
#            enumerated the axis) and the service's peak RSS grows by less
#            than 64 MB (~1 GB per submission before)
#   metrics  a trial prints 200,000 metric lines of 5 metrics each (10 MB):
#            one segment stores at most 10,000 lines (50,001 rows with the
#            last objective; 1,000,000 before, and the loop blocked), the
#            rest are counted in an event (segment.metrics_dropped); a read
#            of its metrics answers one page (20,000 rows, "more": true);
#            the service's peak RSS grows by less than 64 MB; the
#            learning curves of 40 such trials (2 million rows) are read
#            as a stream and thinned to points_max a curve, its newest
#            point kept: peak RSS grows by less than 64 MB (236 MB before);
#            200,000 of its events are answered 5,000 a read ("more": true,
#            whatever ?limit= asks), read on with ?after=; 25,000 of its
#            segments 10,000 a read; relish export through the service
#            writes every metric row and segment (it wrote 20,000 rows)
#   forever  a trial that names no memory and never ends (sleep 600): it
#            reserves the service's trial_memory (256 MiB here), not the
#            whole host (the victim runs beside it), and its segment ends
#            as a timeout after max_segment_time (5 s here; it ran for
#            ever before)
#   experiments  users: {default: {experiments: 2}}: the attacker's third
#            running experiment is refused (409, naming the limit) while
#            the victim still submits
#   hostlimits  users: {ATTACKER: {cpus: 2}}, then {host_memory: 600MiB}:
#            of the attacker's 6 concurrent 1-CPU trials (then trials
#            holding 200 MB, 256 MiB declared) at most 2 run at once (all
#            that fit the host before) while the victim runs beside them
#   cpumax   a process trial declaring cpus: 0.05 spins for 2 s (at 0.01
#            Python's start alone takes 5 s, the segments' limit here): it
#            gets at most a fifth of a CPU (cgroup v2 cpu.max, or the v1 cpu
#            quota; skipped, saying why, where no cpu controller serves);
#            its attempt to move itself into a root cgroup first fails
#   allow    users: {VICTIM: {allow: [trial.mounts]}}: the victim's
#            container trial with bind mounts runs, the attacker's same
#            spec is refused 403 naming trial.mounts (allow: was
#            everyone's; needs podman)
#   gpuenv   a container trial without GPUs sets NVIDIA_VISIBLE_DEVICES=all
#            and CUDA_VISIBLE_DEVICES=0 in trial.env: inside it sees
#            NVIDIA_VISIBLE_DEVICES=void and no CUDA_ variable (the NVIDIA
#            hook would have given it every GPU; needs podman)
#   resume   the attacker's container experiment admitted under its own
#            allow: [trial.mounts] runs; the service is stopped and started
#            with the grant taken out: the experiment is not resumed (the
#            log says why) and the victim runs (needs podman)
#   forkbomb trial_processes: 64 here: a trial forks children that sleep
#            until it has 400 or fork fails: fork fails (EAGAIN) at the
#            attacker's 64 processes, so the machine's process table (the
#            victim's next segments) is never filled
# The Slurm path has its own file (test_serve_attacks_slurm.sh), the full
# disk too (test_serve_attacks_disk.sh: a small file system of its own).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/attack-lib.sh"
serve_lib_init serve-attacks
serve_users 2
# The service's peak RSS is measured: ASan's quarantine of freed memory
# (256 MB by default) would count as the service's own.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
export CONTAINERS_CONF="$RELISH_SRC/scripts/containers.conf"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
# every reload keeps these (a reloaded config applies them at once)
base_config=$'max_segment_time: 5s\ntrial_memory: 256MiB\ntrial_processes: 64\n'
printf '%s' "$base_config" >"$work/config.yaml"
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml"

# ---- env: trial.env reaching a program root executes ----------------------
attack_env() {
  victim_start
  evil_so
  aspec "$work/env.yaml" attack-env 2 1 10 \
    "  env: {LD_PRELOAD: \"$work/evil.so\", EVIL_DIR: \"$work/pwn\", ASAN_OPTIONS: \"verify_asan_link_order=0\"}"
  as "$U1" "$R" submit env.yaml --follow >"$work/env.out" 2>&1 || fail "submit env.yaml: $(cat "$work/env.out")"
  if ls "$work/pwn" | grep -q '^euid-0\.'; then
    fail "trial.env's LD_PRELOAD ran as root: $(ls "$work/pwn")"
  fi
  ls "$work/pwn" | grep -q "^euid-$UID1\." || fail "the trial did not get its environment: $(ls "$work/pwn")"
  victim_ok
}

# ---- grants: what hides beyond the 64th grant -----------------------------
# GRANTS_SPEC NAME ALLOWED-LINES: a container spec asking for LINES, then for
# SYS_ADMIN, root, new privileges and / read-write
# (an image that exists where podman runs: what is admitted would run)
grants_spec() {
  aspec "$work/$1.yaml" "$1" 1 1 10 "  executor: podman
  image: $grants_image
$2"
}
attack_grants() {
  victim_start
  grants_image=localhost/relish-none
  if command -v podman >/dev/null && "$RELISH_SRC/tests/support/nested-skip.sh" podman >/dev/null &&
     "$RELISH_SRC/scripts/podman-image.sh" >/dev/null 2>&1; then
    grants_image=localhost/relish-host
  fi
  local caps mounts i out rc
  caps=$(for i in $(seq 64); do printf 'NET_RAW, '; done)
  grants_spec attack-grants-caps "  privileges: {capabilities: [${caps}SYS_ADMIN], user: root, new_privileges: true}
  mounts: [\"/:/host:rw\"]"
  mounts=$(for i in $(seq 64); do printf '"/tmp/rl-grant-%d:/m%d:ro", ' "$i" "$i"; done)
  grants_spec attack-grants-mounts "  privileges: {capabilities: [SYS_ADMIN], user: root, new_privileges: true}
  mounts: [${mounts}\"/:/host:rw\"]"
  for c in "trial.privileges.capabilities=NET_RAW" "trial.mounts"; do
    reload_config "allow: [$c]"
    case $c in *NET_RAW) s=attack-grants-caps want="each capability once" ;; *) s=attack-grants-mounts want="trial.privileges.capabilities: SYS_ADMIN" ;; esac
    set +e
    out=$(as "$U1" "$R" submit "$s.yaml" 2>&1); rc=$?
    set -e
    [ "$rc" != 0 ] || fail "$s was admitted with allow: [$c]: $out"
    printf '%s' "$out" | grep -q "$want" || fail "$s: the refusal does not say '$want': $out"
    api "/api/v1/experiments/$s" | grep -q RL_ENOTFOUND || fail "$s exists: $(api "/api/v1/experiments/$s")"
  done
  reload_config ""
  victim_ok
}

# ---- alias: YAML alias amplification -----------------------------------------
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$spid/status"; }
attack_alias() {
  victim_start
  $PY - "$work/alias.yaml" <<'P'
import sys
aliases = ", ".join(["*a"] * 2000)
open(sys.argv[1], "w").write("name: attack-alias\nnote: &a %s\nmore: [%s]\n" % ("x" * 100000, aliases))
P
  chmod 644 "$work/alias.yaml"
  local before after out rc
  before=$(hwm_kib)
  set +e
  out=$(post_spec "$U1" "$work/alias.yaml"); rc=$?
  set -e
  after=$(hwm_kib)
  echo "alias: $(stat -c %s "$work/alias.yaml") bytes; the service's peak RSS $((before / 1024)) -> $((after / 1024)) MiB"
  [ "$rc" = 0 ] && [ "${out##*$'\n'}" = 400 ] && printf '%s' "$out" | grep -q "too large once its aliases are expanded" ||
    fail "the alias bomb was not refused by the byte budget: exit $rc: $out"
  [ $((after - before)) -lt 65536 ] || fail "the alias bomb grew the service's peak RSS by $(((after - before) / 1024)) MiB"
  victim_ok
}

# ---- grid: huge grid axes -------------------------------------------------------
# GRID_SPEC FILE NAME ALGORITHM: one trial, x's axis 2^24 values
grid_spec() {
  aspec "$work/$1.yaml" "$2" 1 1 10
  sed -i -e "s/algorithm: random/algorithm: $3/" \
    -e 's/x: {type: uniform, low: 0.0, high: 1.0}/x: {type: uniform, low: 0, high: 16777216, step: 1}/' "$work/$1.yaml"
}
ms_now() { date +%s%3N; }
attack_grid() {
  victim_start
  local out rc before after i t0 t1 worst=0
  grid_spec grid-g attack-grid grid
  set +e
  out=$(as "$U1" "$R" submit grid-g.yaml 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] || fail "a grid of 2^24 values per axis was admitted: $out"
  printf '%s' "$out" | grep -q "search.space.x.step: grid search would take 16777217 values of x (at most 100000" ||
    fail "the grid refusal does not name the field and the cap: $out"
  grid_spec grid-r attack-grid-r random
  before=$(hwm_kib)
  ( for i in $(seq 8); do as "$U1" "$R" submit --name "attack-grid-r$i" grid-r.yaml >/dev/null 2>&1; done ) &
  local bg=$!
  for i in $(seq 5); do
    aspec "$work/gv$i.yaml" "victim-grid-$i" 1 1 10
    t0=$(ms_now)
    as "$U2" "$R" submit "gv$i.yaml" >/dev/null || fail "the victim's submit gv$i.yaml failed"
    t1=$(ms_now)
    [ $((t1 - t0)) -gt "$worst" ] && worst=$((t1 - t0))
  done
  wait "$bg" || true
  after=$(hwm_kib)
  echo "grid: the victim's slowest submit during the attack: ${worst} ms; the service's peak RSS $((before / 1024)) -> $((after / 1024)) MiB"
  [ "$worst" -lt 3000 ] || fail "the victim's submit took ${worst} ms while the attacker submitted huge axes"
  [ $((after - before)) -lt 65536 ] || fail "huge axes grew the service's peak RSS by $(((after - before) / 1024)) MiB"
  api "/api/v1/experiments/attack-grid-r8?owner=$U1" | grep -q '"id"' || fail "the random-search submissions were not taken"
  victim_ok
}

# ---- metrics: unbounded metric rows -------------------------------------------
# copy_rows TABLE ID KEY FIRST N: N copies of TABLE's row ID in the
# service's database, as if they had been written, with KEY = FIRST,
# FIRST + 1, ...; prints the new ids
copy_rows() {
  $PY - "$work/state/relish.db" "$@" <<'P'
import sqlite3, sys
path, table, rid, key, first, n = sys.argv[1:7]
db = sqlite3.connect(path, timeout=60)
cols = ", ".join(r[1] for r in db.execute("PRAGMA table_info(%s)" % table) if r[1] not in ("id", key))
with db:
    for k in range(int(n)):
        print(db.execute("INSERT INTO %s(%s, %s) SELECT ?, %s FROM %s WHERE id = ?"
                         % (table, key, cols, cols, table), (int(first) + k, int(rid))).lastrowid)
P
}
attack_metrics() {
  victim_start
  cat >"$work/spew.sh" <<'W'
#!/bin/sh
awk 'BEGIN { for (i = 1; i <= 200000; i++) printf "RELISH epoch=%.6f accuracy=0.5 loss=0.5 a=1 b=2\n", i / 200000 }'
W
  chmod 755 "$work/spew.sh"
  aspec "$work/metrics.yaml" attack-metrics 1 1 10
  sed -i "s|^  command: .*|  command: [\"$work/spew.sh\"]|" "$work/metrics.yaml"
  local before after rows page
  before=$(hwm_kib)
  as "$U1" "$R" submit metrics.yaml --follow >"$work/metrics.out" 2>&1 || fail "submit metrics.yaml: $(tail -5 "$work/metrics.out")"
  rows=$($PY - "$work/state/relish.db" <<'P2'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
print(db.execute("SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id"
                 " JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'attack-metrics'").fetchone()[0])
P2
)
  page=$(api "/api/v1/experiments/attack-metrics/metrics?owner=$U1" | $PY -c 'import json, sys; j = json.load(sys.stdin); print(len(j["metrics"]), j["more"], j["next_offset"])')
  after=$(hwm_kib)
  echo "metrics: 1,000,000 values printed, $rows rows stored; one read: $page; the service's peak RSS $((before / 1024)) -> $((after / 1024)) MiB"
  [ "$rows" -le 50001 ] && [ "$rows" -ge 50000 ] || fail "the attacker's segment stored $rows metric rows"
  [ "$page" = "20000 True 20000" ] || fail "a read of the metrics answered: $page"
  api "/api/v1/experiments/attack-metrics/events?owner=$U1" | grep -q '190000 metric lines past the 10000 one segment may store were dropped' ||
    fail "no event counts the dropped lines: $(api "/api/v1/experiments/attack-metrics/events?owner=$U1" | head -c 2000)"
  [ $((after - before)) -lt 131072 ] || fail "the metric lines grew the service's peak RSS by $(((after - before) / 1024)) MiB"
  # relish export through the service reads every page (it took the
  # first 20,000 rows alone)
  local exported
  exported=$(as "$U1" "$R" export --format csv --what metrics --experiment attack-metrics | tail -n +2 | wc -l)
  [ "$exported" = "$rows" ] || fail "relish export through the service wrote $exported of $rows metric rows"
  echo "metrics: relish export through the service: $exported rows"
  # The learning curves of 40 such trials (2 million rows, copied in the
  # store as if they had run): read as a stream, each curve thinned to at
  # most points_max (+ its newest point); reading them all took the
  # service from 23 to 259 MB a request (450 MB with four at once).
  local tid nid
  tid=$(sqlite3 "$work/state/relish.db" "SELECT t.id FROM trials t JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'attack-metrics'")
  for nid in $(copy_rows trials "$tid" idx 1000 39); do
    sqlite3 "$work/state/relish.db" "INSERT INTO metrics(trial_id, resource, name, value, at) SELECT $nid, resource, name, value, at FROM metrics WHERE trial_id = $tid"
  done
  before=$(hwm_kib)
  local curves
  curves=$(api "/api/v1/experiments/attack-metrics/curves?owner=$U1" | $PY -c '
import json, sys
j = json.load(sys.stdin)
n = [len(t["points"]) for t in j["trials"]]
last = {tuple(t["points"][-1]) for t in j["trials"]}
print(len(n), max(n), j["points_max"], sorted(last))')
  after=$(hwm_kib)
  echo "metrics: curves of 40 trials of 50,000 rows: $curves; the service's peak RSS $((before / 1024)) -> $((after / 1024)) MiB"
  set -- $curves
  [ "$1" = 40 ] && [ "$2" -le $(($3 + 1)) ] || fail "the curves read: $curves"
  case $curves in *"[(1, 0.5)]") ;; *) fail "a curve lost its newest point: $curves" ;; esac
  [ $((after - before)) -lt 65536 ] || fail "reading the curves grew the service's peak RSS by $(((after - before) / 1024)) MiB"
  # 200,000 events of the experiment (as its segments' would be): a read
  # answers a page of 5,000 (more: true), whatever ?limit= asks, and the
  # pages read on with ?after= add up to all of them
  $PY - "$work/state/relish.db" <<'P4'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=60)
eid, = db.execute("SELECT id FROM experiments WHERE name = 'attack-metrics'").fetchone()
with db:
    db.executemany("INSERT INTO events(at, experiment_id, kind, message) VALUES(1, ?, 'segment.note', ?)",
                   ((eid, "x" * 1000) for _ in range(200000)))
P4
  local events
  events=$(api "/api/v1/experiments/attack-metrics/events?owner=$U1&limit=1000000" | $PY -c '
import json, sys
j = json.load(sys.stdin)
print(len(j["events"]), j["more"])')
  [ "$events" = "5000 True" ] || fail "a read of 200,000 events answered: $events"
  local total=0 last=0 page
  while :; do
    page=$(api "/api/v1/experiments/attack-metrics/events?owner=$U1&after=$last" | $PY -c '
import json, sys
j = json.load(sys.stdin)
print(len(j["events"]), j["last_id"], j["more"])')
    set -- $page
    total=$((total + $1)); last=$2
    [ "$3" = True ] || break
  done
  after=$(hwm_kib)
  echo "metrics: 200,000 events read in pages of 5,000: $total in all; peak RSS $((after / 1024)) MiB"
  # 25,000 segments of the experiment: a read answers a page of 10,000,
  # and relish export through the service reads all of them
  local sid
  sid=$(sqlite3 "$work/state/relish.db" "SELECT g.id FROM segments g JOIN trials t ON t.id = g.trial_id JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'attack-metrics' LIMIT 1")
  copy_rows segments "$sid" seq 1000 25000 >/dev/null
  local segs nseg
  segs=$(api "/api/v1/experiments/attack-metrics/segments?owner=$U1&limit=100000" | $PY -c '
import json, sys
j = json.load(sys.stdin)
print(len(j["segments"]), j["more"], j["next_offset"])')
  [ "$segs" = "10000 True 10000" ] || fail "a read of 25,000 segments answered: $segs"
  nseg=$(sqlite3 "file:$work/state/relish.db?mode=ro" "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id JOIN experiments e ON e.id = t.experiment_id WHERE e.name = 'attack-metrics'")
  exported=$(as "$U1" "$R" export --format csv --what segments --experiment attack-metrics | tail -n +2 | wc -l)
  [ "$exported" = "$nseg" ] || fail "relish export through the service wrote $exported of $nseg segments"
  after=$(hwm_kib)
  echo "metrics: $nseg segments read 10,000 a page; relish export wrote $exported; peak RSS $((after / 1024)) MiB"
  [ "$total" -ge 200000 ] || fail "the pages held $total events"
  [ $((after - before)) -lt 65536 ] || fail "reading the events grew the service's peak RSS by $(((after - before) / 1024)) MiB"
  victim_ok
}

# ---- forever: starvation by a trial that never ends ---------------------------
seg_field() { # EXPERIMENT OWNER FIELD: the values of FIELD in its segments
  api "/api/v1/experiments/$1/segments?owner=$2" | $PY -c 'import json, sys; print(" ".join(str(g.get(sys.argv[1])) for g in json.load(sys.stdin)["segments"]))' "$3"
}
attack_forever() {
  aspec "$work/forever.yaml" attack-forever 1 1 10
  sed -i -e 's|^  command: .*|  command: ["/bin/sleep", "600"]|' -e '/^  resources:/d' "$work/forever.yaml"
  as "$U1" "$R" submit forever.yaml >/dev/null || fail "submit forever.yaml"
  wait_for 30 sh -c "[ -n \"\$(curl -s --unix-socket '$sock' 'http://relish/api/v1/experiments/attack-forever/segments?owner=$U1' | grep -o '\"status\":\"running\"')\" ]"
  local res
  res=$(seg_field attack-forever "$U1" mem_reserved_mib)
  echo "forever: the trial that names no memory reserves ${res} MiB"
  [ "${res%% *}" -le 512 ] || fail "a trial naming no memory reserved ${res} MiB"
  victim_start
  victim_ok 60
  wait_for 30 sh -c "curl -s --unix-socket '$sock' 'http://relish/api/v1/experiments/attack-forever/segments?owner=$U1' | grep -q '\"status\":\"timeout\"'"
  echo "forever: its segments ended: $(seg_field attack-forever "$U1" status)"
  as "$U1" "$R" cancel "attack-forever" >/dev/null 2>&1 || true
}

# ---- experiments: one user's running experiments bounded ----------------------
attack_experiments() {
  local i out rc n
  # the attacker's experiments of the cases before that still run, plus 2
  n=$(api /api/v1/experiments | $PY -c 'import json, sys; print(sum(1 for e in json.load(sys.stdin)["experiments"] if e.get("owner") == sys.argv[1] and e.get("status") == "running"))' "$U1")
  reload_config "users: {default: {experiments: $((n + 2))}}"
  for i in 1 2; do
    aspec "$work/many$i.yaml" "attack-many-$i" 1 1 3000
    as "$U1" "$R" submit "many$i.yaml" >/dev/null || fail "the attacker's experiment $i was refused"
  done
  aspec "$work/many3.yaml" attack-many-3 1 1 3000
  set +e
  out=$(as "$U1" "$R" submit many3.yaml 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] && printf '%s' "$out" | grep -q "the most the service allows one user at once" ||
    fail "a third running experiment was admitted: exit $rc: $out"
  victim_start
  victim_ok 60
  for i in 1 2; do as "$U1" "$R" cancel "attack-many-$i" >/dev/null 2>&1 || true; done
  reload_config ""
}

# ---- hostlimits: per-user host memory and CPUs ----------------------------------
# MAX_RUNNING EXPERIMENT OWNER SECONDS: the most segments of it seen running
# at once while it runs (sampled every 0.1 s), once it is done
max_running() {
  local most=0 n i s
  for i in $(seq $(($3 * 10))); do
    s=$(api "/api/v1/experiments/$1/segments?owner=$2")
    n=$(printf '%s' "$s" | grep -o '"status":"running"' | wc -l)
    [ "$n" -gt "$most" ] && most=$n
    api "/api/v1/experiments/$1?owner=$2" | grep -q '"status":"running"' || break
    sleep 0.1
  done
  echo "$most"
}
attack_hostlimits() {
  local most
  reload_config "users: {$U1: {cpus: 2}}"
  aspec "$work/hl-cpu.yaml" attack-hl-cpu 6 1 1500
  sed -i 's/max_concurrent: 2/max_concurrent: 6/' "$work/hl-cpu.yaml"
  as "$U1" "$R" submit hl-cpu.yaml >/dev/null || fail "submit hl-cpu.yaml"
  victim_start
  most=$(max_running attack-hl-cpu "$U1" 60)
  echo "hostlimits: users.$U1.cpus 2: at most $most of 6 one-CPU trials ran at once"
  [ "$most" -ge 1 ] && [ "$most" -le 2 ] || fail "$most one-CPU trials ran at once under cpus: 2"
  victim_ok
  # host memory counts reservations (a declared need, then the measured
  # peak and its margin): these trials really hold 200 MB each
  reload_config "users: {$U1: {host_memory: 600MiB}}"
  cat >"$work/hold.py" <<'W'
import time
b = b"x" * (200 << 20)
time.sleep(1.5)
print("RELISH epoch=1 accuracy=0.5", flush=True)
W
  chmod 644 "$work/hold.py"
  aspec "$work/hl-mem.yaml" attack-hl-mem 6 1 10
  sed -i -e 's/max_concurrent: 2/max_concurrent: 6/' -e 's/memory: 32MiB, cpus: 1/memory: 256MiB, cpus: 0.25/' \
    -e "s|^  command: .*|  command: [\"$PY\", \"$work/hold.py\"]|" "$work/hl-mem.yaml"
  as "$U1" "$R" submit hl-mem.yaml >/dev/null || fail "submit hl-mem.yaml"
  attack_case=hostlimits-mem victim_start
  most=$(max_running attack-hl-mem "$U1" 60)
  echo "hostlimits: users.$U1.host_memory 600MiB: at most $most of 6 trials of 200 MB ran at once"
  [ "$most" -ge 1 ] && [ "$most" -le 2 ] || fail "$most trials of 200 MB ran at once under host_memory: 600MiB"
  victim_ok
  reload_config "users: {$U1: {share: 1}}"
}

# ---- cpumax: a process trial's cpus: as a kernel limit -------------------------
attack_cpumax() {
  if grep -q "trials' cpus: not limited in the kernel" "$work/serve.log"; then
    echo "SKIP: $(grep -o "trials' cpus: not limited.*" "$work/serve.log" | head -1)"
    exit 77
  fi
  grep -q "trials' cpus: limited in the kernel" "$work/serve.log" || fail "the service does not say whether it limits CPUs"
  victim_start
  # the trial first tries to leave its CPU limit: its pid into the cpu
  # hierarchy's (and the unified one's) root cgroup, which are root's
  cat >"$work/spin.py" <<'W'
import os, time
escaped = []
for procs in ("/sys/fs/cgroup/cpu/cgroup.procs", "/sys/fs/cgroup/cpu,cpuacct/cgroup.procs",
              "/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/unified/cgroup.procs"):
    try:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
        escaped.append(procs)
    except OSError:
        pass
with open(os.path.join(os.environ["RELISH_CHECKPOINT_DIR"], "escaped"), "w") as f:
    f.write(" ".join(escaped))
t0 = time.time()
while time.time() - t0 < 2:
    pass
with open(os.path.join(os.environ["RELISH_CHECKPOINT_DIR"], "cpu"), "w") as f:
    f.write("%.3f %.3f\n" % (time.process_time(), time.time() - t0))
print("RELISH epoch=1 accuracy=0.5", flush=True)
W
  chmod 644 "$work/spin.py"
  aspec "$work/cpumax.yaml" attack-cpumax 1 1 10
  sed -i -e "s|^  command: .*|  command: [\"$PY\", \"$work/spin.py\"]|" -e 's/cpus: 1}/cpus: 0.05}/' "$work/cpumax.yaml"
  as "$U1" "$R" submit cpumax.yaml --follow >"$work/cpumax.out" 2>&1 || fail "submit cpumax.yaml: $(tail -5 "$work/cpumax.out")"
  local f used wall
  f=$(find "$work/state/runs" -name cpu -path '*attack-cpumax*' 2>/dev/null | head -1)
  [ -n "$f" ] || f=$(grep -rl . "$work/state/runs" --include=cpu 2>/dev/null | head -1)
  [ -n "$f" ] || fail "the spinning trial left no figure: $(tail -5 "$work/cpumax.out")"
  read -r used wall <"$f"
  [ ! -s "$(dirname "$f")/escaped" ] || fail "the trial moved itself to another cgroup: $(cat "$(dirname "$f")/escaped")"
  echo "cpumax: a trial declaring cpus: 0.05 used $used s of CPU in $wall s ($(grep -o "trials' cpus: limited[^;]*" "$work/serve.log" | head -1))"
  awk -v u="$used" -v w="$wall" 'BEGIN { exit !(u < 0.2 * w) }' || fail "cpus: 0.05 used $used s of CPU in $wall s"
  victim_ok
}

# ---- forkbomb: one user's processes fill the machine's table ----------------------
attack_forkbomb() {
  victim_start
  cat >"$work/forkbomb.py" <<'W'
import os, time
kids, err = 0, "none"
while kids < 400:
    try:
        pid = os.fork()
    except OSError as e:
        err = e.__class__.__name__
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    kids += 1
with open(os.path.join(os.environ["RELISH_CHECKPOINT_DIR"], "forks"), "w") as f:
    f.write("%d %s\n" % (kids, err))
print("RELISH epoch=1 accuracy=0.5", flush=True)
W
  chmod 644 "$work/forkbomb.py"
  aspec "$work/forkbomb.yaml" attack-forkbomb 1 1 10
  sed -i -e "s|^  command: .*|  command: [\"$PY\", \"$work/forkbomb.py\"]|" "$work/forkbomb.yaml"
  as "$U1" "$R" submit forkbomb.yaml --follow >"$work/forkbomb.out" 2>&1 || fail "submit forkbomb.yaml: $(tail -5 "$work/forkbomb.out")"
  local f kids why
  f=$(find "$work/state/runs" -name forks -path '*attack-forkbomb*' 2>/dev/null | head -1)
  [ -n "$f" ] || fail "the forking trial left no figure: $(tail -5 "$work/forkbomb.out")"
  read -r kids why <"$f"
  echo "forkbomb: the trial started $kids children before fork failed ($why) under trial_processes: 64"
  [ "$kids" -lt 64 ] && [ "$why" = BlockingIOError ] || fail "the trial started $kids children ($why) under trial_processes: 64"
  victim_ok
  # the children outlive their trial by up to 3 s, and count against the
  # attacker's next case's limit until they end
  wait_for 30 sh -c "! pgrep -u '$U1' >/dev/null"
}

# ---- allow, gpuenv, resume: container cases --------------------------------------
have_podman() {
  if ! command -v podman >/dev/null || ! "$RELISH_SRC/tests/support/nested-skip.sh" podman >/dev/null ||
     ! "$RELISH_SRC/scripts/podman-image.sh" >/dev/null 2>&1; then
    echo "SKIP: podman cannot run containers here"
    exit 77
  fi
}
# CSPEC FILE NAME COMMAND-LINE [EXTRA]: one container trial of the host's
# /usr and the test's folder (read-only), which needs trial.mounts
cspec() {
  aspec "$1" "$2" 1 1 10 "  executor: podman
  image: localhost/relish-host
  mounts: [\"/usr:/usr:ro\", \"$work:$work:ro\"]
${4:-}"
  [ -z "$3" ] || sed -i "s|^  command: .*|  command: $3|" "$1"
}
attack_allow() {
  have_podman
  reload_config "users: {$U2: {allow: [trial.mounts]}}"
  local out rc
  cspec "$work/allow.yaml" attack-allow ""
  set +e
  out=$(as "$U1" "$R" submit allow.yaml 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] && printf '%s' "$out" | grep -q "trial.mounts" ||
    fail "a grant allowed to $U2 only was $U1's too: exit $rc: $out"
  api "/api/v1/experiments/attack-allow?owner=$U1" | grep -q RL_ENOTFOUND || fail "attack-allow exists"
  VICTIM_EXTRA="  executor: podman
  image: localhost/relish-host
  mounts: [\"/usr:/usr:ro\", \"$work:$work:ro\"]" victim_start
  VICTIM_EXTRA= victim_ok
  reload_config "users: {$U2: {share: 1}}"
}
attack_gpuenv() {
  have_podman
  reload_config "allow: [trial.mounts]"
  victim_start
  cspec "$work/gpuenv.yaml" attack-gpuenv \
    "[\"/bin/sh\", \"-c\", \"env > \$RELISH_CHECKPOINT_DIR/env; exec $CTRIAL --x 0.5 --y 0\"]" \
    "  env: {NVIDIA_VISIBLE_DEVICES: all, CUDA_VISIBLE_DEVICES: \"0\", NVIDIA_DRIVER_CAPABILITIES: all}"
  as "$U1" "$R" submit gpuenv.yaml --follow >"$work/gpuenv.out" 2>&1 || fail "submit gpuenv.yaml: $(tail -5 "$work/gpuenv.out")"
  local f
  f=$(find "$work/state/runs" -name env -path '*attack-gpuenv*' 2>/dev/null | head -1)
  [ -n "$f" ] || fail "the container trial left no environment: $(tail -5 "$work/gpuenv.out")"
  echo "gpuenv: the container saw: $(grep -E '^(NVIDIA|CUDA)_' "$f" | tr '\n' ' ')"
  grep -qx 'NVIDIA_VISIBLE_DEVICES=void' "$f" || fail "NVIDIA_VISIBLE_DEVICES inside: $(grep NVIDIA_VISIBLE "$f")"
  ! grep -q '^CUDA_' "$f" || fail "a CUDA variable reached a container without GPUs: $(grep '^CUDA_' "$f")"
  ! grep -q '^NVIDIA_DRIVER' "$f" || fail "an NVIDIA variable reached a container without GPUs"
  victim_ok
  reload_config ""
}
attack_resume() {
  have_podman
  printf 'grace: 1s\nusers: {%s: {allow: [trial.mounts]}}\n' "$U1" >"$work/config.yaml"
  serve_restart --devices "$work/devices.yaml" --config "$work/config.yaml"
  cspec "$work/resume.yaml" attack-resume '["/bin/sleep", "600"]'
  as "$U1" "$R" submit resume.yaml >/dev/null || fail "the attacker's allowed container spec was refused"
  wait_for 60 sh -c "curl -s --unix-socket '$sock' 'http://relish/api/v1/experiments/attack-resume/segments?owner=$U1' | grep -q '\"status\":\"running\"'"
  printf 'grace: 1s\n' >"$work/config.yaml"
  serve_restart --devices "$work/devices.yaml" --config "$work/config.yaml"
  wait_for 30 grep -q 'event=serve.resume.*attack-resume.*trial.mounts' "$work/serve.log"
  echo "resume: $(grep 'event=serve.resume.*attack-resume' "$work/serve.log" | tail -1 | cut -c1-300)"
  victim_start
  victim_ok
  if seg_field attack-resume "$U1" status | grep -q running; then
    fail "the experiment whose grant was taken out runs again: $(seg_field attack-resume "$U1" status)"
  fi
  [ -z "$(podman ps -q --filter label=relish.experiment=attack-resume 2>/dev/null)" ] ||
    fail "a container of attack-resume runs after the restart"
}

all="env grants alias grid metrics forever experiments hostlimits cpumax forkbomb allow gpuenv resume"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
serve_adopt_restarted
attack_summary || exit 1
serve_stop
