#!/usr/bin/env bash
# bench_attacks.sh - relish serve while one of its users attacks it (issue
# 25's goals): the daemon's memory and another user's submit latency during
# each attack, against a quiet phase of the same service in the same
# command.
#
# It makes 2 Unix users (useradd; removed at the end): the attacker and the
# victim.  A service (root) runs on a temporary state folder with a host of
# 4 GiB and 4 CPUs.  Each phase: the attack runs in the background while the
# victim POSTs N submissions (curl on the unix socket, one after another:
# the latency of POST /api/v1/experiments, which answers once committed);
# the daemon's RSS is sampled every 0.2 s.  Phases:
#   quiet    no attack (the reference)
#   conns    140 slow connections on the unix socket (a header byte a second)
#   alias    108 KB specs of YAML aliases of one 100 KB value, posted in a loop
#   grid     random-search specs with a 2^24-value axis, submitted in a loop
#   metrics  a trial printing 200,000 metric lines of 5 metrics
# Printed per phase: the victim's submit p50 and p99 (ms), p99 / quiet p99,
# the daemon's peak RSS during the phase (VmRSS samples, MB) and its VmHWM.
# Goals (issue 25): RSS < 100 MB and the victim's submit p99 < 50 ms under
# every attack.
#
# Usage (root): bench/bench_attacks.sh [BUILD]   (default build/release;
# BUILD holds relish, relish-runas and ctrial).  N= submissions per phase
# (default 40).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build/release}" && pwd)
N=${N:-40}
[ "$(id -u)" = 0 ] || { echo "bench_attacks: run as root (it makes users)" >&2; exit 2; }
work=$(mktemp -d /tmp/relish-bench-attacks-XXXXXX)
chmod 755 "$work"
users=() spid= bg=
cleanup() {
  [ -n "$bg" ] && kill "$bg" 2>/dev/null || true
  [ -n "$spid" ] && kill -9 "$spid" 2>/dev/null || true
  for u in "${users[@]}"; do pkill -9 -u "$u" 2>/dev/null || true; done
  sleep 0.2
  for u in "${users[@]}"; do userdel "$u" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
tag=$(printf '%04x' $RANDOM)
for r in a v; do
  useradd -M -d /nonexistent -s /usr/sbin/nologin "rlb${tag}$r"
  users+=("rlb${tag}$r")
done
A=${users[0]} V=${users[1]}
mkdir -p "$work/bin"
cp "$build/relish" "$build/relish-runas" "$build/ctrial" "$src/tests/support/slow_conns.py" "$work/bin/"
chmod 755 "$work/bin" "$work/bin/"*
sock=$work/state/relish.sock
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
printf 'trial_memory: 256MiB\nmax_segment_time: 60s\n' >"$work/config.yaml"
"$work/bin/relish" serve --state "$work/state" --devices "$work/devices.yaml" --config "$work/config.yaml" \
  >"$work/serve.log" 2>&1 &
spid=$!
for _ in $(seq 200); do
  curl -sf --unix-socket "$sock" http://relish/api/v1/server >/dev/null 2>&1 && break
  sleep 0.05
done
as() { local u=$1; shift; (cd "$work" && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$@"); }

# the victim's spec, as a JSON body (a new name each time)
body() { # FILE NAME [TRIAL-COMMAND-JSON]
  python3 - "$1" "$2" "$work" "${3:-}" <<'P'
import json, sys
path, name, work, cmd = sys.argv[1:5]
cmd = cmd or json.dumps([work + "/bin/ctrial", "--x", "{x}", "--y", "0", "--sleep-ms", "10"])
spec = """name: %s
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 7, max_trials: 1, space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: %s
  resources: {memory: 32MiB, cpus: 0.1}
""" % (name, cmd)
json.dump({"spec": spec, "name": name + ".yaml"}, open(path, "w"))
P
  chmod 644 "$1"
}
post() { # USER FILE: "STATUS SECONDS"
  as "$1" curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 60 --unix-socket "$sock" \
    -H 'Content-Type: application/json' --data-binary "@$2" http://relish/api/v1/experiments || true
}
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$spid/status"; }
hwm_mb() { awk '/^VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$spid/status"; }

# ---- the attacks (each loops until killed) ----
attack_conns() { while :; do as "$A" "$work/bin/slow_conns.py" "$sock" 140 12 >/dev/null 2>&1; done; }
attack_alias() {
  python3 - "$work/alias.json" <<'P'
import json, sys
aliases = ", ".join(["*a"] * 2000)
spec = "name: bench-alias\nnote: &a %s\nmore: [%s]\n" % ("x" * 100000, aliases)
json.dump({"spec": spec, "name": "alias.yaml"}, open(sys.argv[1], "w"))
P
  chmod 644 "$work/alias.json"
  while :; do post "$A" "$work/alias.json" >/dev/null; done
}
attack_grid() {
  local i=0
  while :; do
    i=$((i + 1))
    body "$work/grid.json" "bench-grid-$i"
    sed -i 's/x: {type: uniform, low: 0.0, high: 1.0}/x: {type: uniform, low: 0, high: 16777216, step: 1}/' "$work/grid.json"
    post "$A" "$work/grid.json" >/dev/null
  done
}
attack_metrics() {
  cat >"$work/spew.sh" <<'W'
#!/bin/sh
awk 'BEGIN { for (i = 1; i <= 200000; i++) printf "RELISH epoch=%.6f accuracy=0.5 loss=0.5 a=1 b=2\n", i / 200000 }'
W
  chmod 755 "$work/spew.sh"
  local i=0
  while :; do
    i=$((i + 1))
    body "$work/spew.json" "bench-metrics-$i" "[\"$work/spew.sh\"]"
    post "$A" "$work/spew.json" >/dev/null
    sleep 3
  done
}

quiet_p99=
printf '%-8s %5s %9s %9s %9s %10s %9s\n' phase n p50_ms p99_ms p99/quiet rss_max_mb hwm_mb
for phase in quiet conns alias grid metrics; do
  if [ "$phase" != quiet ]; then
    "attack_$phase" &
    bg=$!
    sleep 2 # the attack under way
  fi
  : >"$work/lat" ; : >"$work/rss"
  ( while :; do rss_mb >>"$work/rss"; echo >>"$work/rss"; sleep 0.2; done ) &
  sampler=$!
  for i in $(seq "$N"); do
    body "$work/v.json" "victim-$phase-$i"
    r=$(post "$V" "$work/v.json")
    [ "${r%% *}" = 201 ] || { echo "bench_attacks: the victim's submit in $phase: $r" >&2; exit 1; }
    echo "${r#* }" >>"$work/lat"
  done
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  if [ -n "$bg" ]; then
    kill -- "$bg" 2>/dev/null || true
    pkill -P "$bg" 2>/dev/null || true
    wait "$bg" 2>/dev/null || true
    bg=
    pkill -9 -u "$A" 2>/dev/null || true
  fi
  read -r p50 p99 < <(sort -g "$work/lat" | awk '{v[NR] = $1 * 1000} END {
    i50 = int(0.5 * NR + 0.999); i99 = int(0.99 * NR + 0.999); printf "%.1f %.1f\n", v[i50], v[i99] }')
  [ -z "$quiet_p99" ] && quiet_p99=$p99
  rmax=$(grep -v '^$' "$work/rss" | sort -g | tail -1)
  printf '%-8s %5d %9s %9s %8.2fx %10s %9s\n' "$phase" "$N" "$p50" "$p99" \
    "$(awk -v a="$p99" -v b="$quiet_p99" 'BEGIN { print (b > 0 ? a / b : 0) }')" "${rmax:-?}" "$(hwm_mb)"
done
kill -TERM "$spid"
wait "$spid" 2>/dev/null || true
spid=
echo "goals: rss < 100 MB, the victim's submit p99 < 50 ms during every attack"
