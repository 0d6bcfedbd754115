#!/usr/bin/env bash
# test_serve_attacks_api.sh - relish serve's API attacked by one of its
# users (issue 25, items 5, 8 and 10): a real service (root), real Unix
# users (useradd; skipped, saying why, where that is impossible): $U1 is
# the attacker, $U2 the victim.  Each case asserts that the attack fails
# AND that the victim's experiment, submitted just before, runs to its end
# (attack-lib.sh).  Cases (all by default; ATTACKS="conns" picks some):
#   conns    $U1 holds 140 slow connections on the unix socket (a byte a
#            second, headers never finished) and 40 over TCP: beyond 16
#            per uid (per address over TCP) they are answered 429 at
#            once, the ones held are cut when their headers are not in
#            after 10 s (a deadline, not an idle timeout), and meanwhile
#            $U2's and root's requests are answered at once
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/attack-lib.sh"
serve_lib_init serve-attacks-api
serve_users 2
cp "$here/support/slow_conns.py" "$work/bin/"
chmod 755 "$work/bin/slow_conns.py"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
: >"$work/config.yaml"
serve_start --devices "$work/devices.yaml" --config "$work/config.yaml" --listen 127.0.0.1:0
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the log"

# ---- conns: connection exhaustion -------------------------------------------
# SECONDS a request took, as USER (unix socket) or over TCP ("tcp")
req_time() {
  if [ "$1" = tcp ]; then
    curl -s -o /dev/null --max-time 20 -w '%{http_code} %{time_total}' "http://127.0.0.1:$port/api/v1/server"
  else
    as "$1" curl -s -o /dev/null --max-time 20 -w '%{http_code} %{time_total}' --unix-socket "$sock" http://relish/api/v1/server
  fi
}
prompt() { # WHO WHAT: WHO's request answered 200 within 2 s
  local r
  r=$(req_time "$1" || true)
  echo "conns: $2's request while attacked: $r"
  case $r in "200 "*) ;; *) fail "$2's request was not answered while $U1 held connections: '$r'" ;; esac
  awk -v t="${r#* }" 'BEGIN { exit !(t < 2.0) }' || fail "$2's request took ${r#* } s"
}
attack_conns() {
  victim_start
  as "$U1" "$work/bin/slow_conns.py" "$sock" 140 25 >"$work/conns-unix.out" 2>&1 &
  local a1=$!
  as "$U1" "$work/bin/slow_conns.py" "127.0.0.1:$port" 40 25 >"$work/conns-tcp.out" 2>&1 &
  local a2=$!
  wait_for 20 grep -q '^held=' "$work/conns-unix.out"
  wait_for 20 grep -q '^held=' "$work/conns-tcp.out"
  prompt "$U2" "$U2 (unix)"
  prompt root "root (unix)"
  # the attacker's own next one is refused, and says why
  local own
  own=$(as "$U1" curl -s --max-time 20 -w ' %{http_code}' --unix-socket "$sock" http://relish/api/v1/server || true)
  case $own in *' 429') ;; *) fail "$U1's 141st connection was not refused 429: $own" ;; esac
  printf '%s' "$own" | grep -q "RL_ELIMIT.*the most one peer may hold" || fail "the 429 does not say why: $own"
  wait "$a1" || fail "the attacker's script failed: $(cat "$work/conns-unix.out")"
  wait "$a2" || fail "the attacker's script failed: $(cat "$work/conns-tcp.out")"
  local f refused held cut cut_s
  for f in unix tcp; do
    echo "conns ($f): $(tr '\n' ' ' <"$work/conns-$f.out")"
    refused=$(sed -n 's/^refused=//p' "$work/conns-$f.out")
    held=$(sed -n 's/^held=//p' "$work/conns-$f.out")
    cut=$(sed -n 's/^cut=\([0-9]*\).*/\1/p' "$work/conns-$f.out")
    cut_s=$(sed -n 's/.*cut_s=//p' "$work/conns-$f.out")
    [ "$held" -le 16 ] || fail "$f: one peer held $held connections (at most 16)"
    [ "$((refused + held))" = "$([ $f = unix ] && echo 140 || echo 40)" ] || fail "$f: $refused refused + $held held"
    [ "$cut" = "$held" ] || fail "$f: $cut of the $held slow connections were cut in 25 s though a byte came every second"
    awk -v t="$cut_s" 'BEGIN { exit !(t >= 9 && t <= 20) }' || fail "$f: the slow connections were cut after $cut_s s (the deadline is 10 s)"
  done
  grep -q 'event=http.refused' "$work/serve.log" || fail "no http.refused line in the log"
  grep -q 'event=http.deadline' "$work/serve.log" || fail "no http.deadline line in the log"
  prompt "$U1" "$U1 (unix, after the attack)"
  victim_ok
}

all="conns"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
attack_summary || exit 1
serve_stop
