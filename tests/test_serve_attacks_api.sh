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
#   envleak  ${VAR} in trial.mounts names a variable of the service's own
#            environment: refused without its value (a service expands
#            only what the submission declares: relish submit sends the
#            submitter's own); $U1's declared variable is expanded
#   oracle   mounts naming paths inside $U2's 0700 folder (one that
#            exists, one that does not, behind "..") are resolved as $U1:
#            both refused alike (Permission denied), nothing resolved
#            shown
#   logforge a URL path holding a newline, an escape byte and a forged
#            " level=error event=..." field: serve.log holds one line for
#            it, the bytes escaped (\x0a, \x1b), no forged line
#   state    a state folder $U1 owns (or others may write), a serve.lock
#            that is a link to a file of root's: relish serve refuses to
#            start, the file is untouched
#   presence $U1 binds (and listens on) the abstract name a service
#            announces itself by, with its own pid and with pid 1: $U2's
#            `relish run` is not refused (who listens is checked: root or
#            the caller only), $U1's own is (the caller itself counts)
#   image    trial.image names a podman transport (docker-archive:PATH
#            of a file only root may read, oci-archive:, dir:,
#            containers-storage:[...]): answered 400 as a spec error,
#            relish submit exits 2; no engine sees it
#   fifo     $U1's trial prints a Python import error, swaps its script for
#            a FIFO and fails: the failure is explained with the PATH only,
#            nothing is opened as root, and the service answers at once
#            (the hint read the script's "#!" line as root on the loop,
#            which the FIFO held); with $U2's 0700 folder first on the
#            PATH, the first line of $U2's program does not reach $U1
#   termesc  $U1's trial prints a line with a window title, a screen clear
#            and a C1 CSI: relish status (as $U1 and as root) and submit
#            --follow show it with those bytes escaped (\x1b), none raw
#   longname a submission whose "name" is 5,000 bytes, its spec with two
#            errors: answered 400, the service runs on (it wrote past the
#            error message's buffer before; found by fuzz_api_routes)
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
# a value only the service's environment holds
export RELISH_TEST_SECRET="s3cr3t-$RANDOM$RANDOM"
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

# ---- envleak: the service's environment through ${VAR} -----------------------
mount_spec() { # FILE NAME MOUNT
  aspec "$1" "$2" 1 1 10 "  executor: podman
  image: localhost/relish-none
  mounts: [\"$3\"]"
}
attack_envleak() {
  victim_start
  local out rc
  mount_spec "$work/leak.yaml" attack-leak '${RELISH_TEST_SECRET}:/x:ro'
  set +e
  out=$(post_spec "$U1" "$work/leak.yaml"); rc=$?
  set -e
  echo "envleak (API): $out"
  case $out in *"$RELISH_TEST_SECRET"*) fail "the service's environment leaked: $out" ;; esac
  [ "${out##*$'\n'}" = 400 ] && printf '%s' "$out" | grep -q "variable RELISH_TEST_SECRET is not among those the submission declares" ||
    fail "\${RELISH_TEST_SECRET} was not refused as undeclared: $out"
  set +e
  out=$(as "$U1" env -u RELISH_TEST_SECRET "$R" submit leak.yaml 2>&1); rc=$?
  set -e
  case $out in *"$RELISH_TEST_SECRET"*) fail "the service's environment leaked through relish submit: $out" ;; esac
  [ "$rc" = 2 ] || fail "relish submit of \${RELISH_TEST_SECRET} without it: exit $rc: $out"
  # the submitter's own variable is theirs to use
  mkdir -p "$work/u1data"
  chown "$U1" "$work/u1data"
  mount_spec "$work/mine-env.yaml" attack-leak-own '${MYDATA}:/data:ro'
  set +e
  out=$(as "$U1" env MYDATA="$work/u1data" "$R" submit mine-env.yaml 2>&1); rc=$?
  set -e
  [ "$rc" = 6 ] && printf '%s' "$out" | grep -q "trial.mounts: $work/u1data:/data:ro" ||
    fail "\${MYDATA} from $U1's environment was not expanded (or not refused by allow:): exit $rc: $out"
  victim_ok
}

# ---- oracle: what exists in another user's 0700 folder ------------------------
attack_oracle() {
  victim_start
  mkdir -p "$work/u2priv/sub"
  chown -R "$U2" "$work/u2priv"
  chmod 700 "$work/u2priv"
  local a b
  mount_spec "$work/or-a.yaml" attack-oracle "$work/u2priv/sub/..:/a:ro"
  mount_spec "$work/or-b.yaml" attack-oracle "$work/u2priv/nosub/..:/a:ro"
  a=$(post_spec "$U1" "$work/or-a.yaml")
  b=$(post_spec "$U1" "$work/or-b.yaml")
  echo "oracle: existing: $a"
  echo "oracle: missing:  $b"
  [ "${a##*$'\n'}" = 403 ] && [ "${b##*$'\n'}" = 403 ] || fail "the mounts were not refused 403: $a / $b"
  b=${b//nosub/sub}
  [ "${a//or-a/OR}" = "${b//or-b/OR}" ] || fail "the answers tell an existing folder from a missing one: $a / $b"
  printf '%s' "$a" | grep -q "cannot reach it (Permission denied)" || fail "the refusal does not say why: $a"
  case $a in *"\"$work/u2priv:"*|*" $work/u2priv:/a"*) fail "a path inside $U2's folder was resolved: $a" ;; esac
  victim_ok
}

# ---- logforge: fields and lines forged through a URL path ------------------------
attack_logforge() {
  victim_start
  local path='/api/v1/experiments/x%0a2031-01-01T00:00:00.000Z%20level=error%20event=forged%20by=attacker%1b%5b2J'
  as "$U1" curl -s -o /dev/null --unix-socket "$sock" "http://relish$path" || true
  wait_for 10 grep -q 'experiments/x' "$work/serve.log"
  grep -q '^2031-01-01' "$work/serve.log" && fail "a forged line reached serve.log: $(grep '^2031' "$work/serve.log")"
  grep -q $'\x1b' "$work/serve.log" && fail "an escape byte reached serve.log"
  local line
  line=$(grep 'experiments/x' "$work/serve.log" | tail -1)
  echo "logforge: $line"
  printf '%s' "$line" | grep -q 'path="/api/v1/experiments/x\\x0a2031-01-01T00:00:00.000Z level=error event=forged by=attacker\\x1b\[2J"' ||
    fail "the path is not quoted and escaped: $line"
  victim_ok
}

# ---- state: the state folder and its lock ------------------------------------------
attack_state() {
  victim_start
  local out rc
  mkdir -p "$work/st-user"
  chown "$U1" "$work/st-user"
  set +e
  out=$("$R" serve --state "$work/st-user" --devices "$work/devices.yaml" 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] && printf '%s' "$out" | grep -q "belongs to uid $UID1, not to the service's user" ||
    fail "a state folder $U1 owns was used: exit $rc: $out"
  mkdir -p "$work/st-open"
  chmod 777 "$work/st-open"
  set +e
  out=$("$R" serve --state "$work/st-open" --devices "$work/devices.yaml" 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] && printf '%s' "$out" | grep -q "mode 0777: others may write into it" ||
    fail "a state folder others may write was used: exit $rc: $out"
  mkdir -p "$work/st-link"
  chmod 711 "$work/st-link"
  printf 'root data\n' >"$work/rootfile"
  ln -s "$work/rootfile" "$work/st-link/serve.lock"
  set +e
  out=$("$R" serve --state "$work/st-link" --devices "$work/devices.yaml" 2>&1); rc=$?
  set -e
  [ "$rc" != 0 ] || fail "relish serve started with serve.lock a link: $out"
  [ "$(cat "$work/rootfile")" = "root data" ] || fail "the file behind serve.lock was changed: $(cat "$work/rootfile")"
  echo "state: refused: ${out##*: }"
  victim_ok
}

# ---- presence: a forged service announcement --------------------------------
attack_presence() {
  victim_start
  local m="spoof-$$" rc
  cat >"$work/spoof.py" <<'P'
import os, socket, sys, time
m = sys.argv[1]
held = []
for pid in (os.getpid(), 1):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0relish/serve/%s/%d/unix:/tmp/forged.sock" % (m, pid))
    s.listen(8)
    held.append(s)
print("bound", flush=True)
t0 = time.time()
while not os.path.exists(sys.argv[2]) and time.time() - t0 < 120:
    time.sleep(0.1)
P
  chmod 644 "$work/spoof.py"
  as "$U1" env RELISH_MACHINE="$m" $PY "$work/spoof.py" "$m" "$work/spoof.stop" >"$work/spoof.out" 2>&1 &
  local sp=$!
  wait_for 10 grep -q bound "$work/spoof.out"
  grep -q "@relish/serve/$m/" /proc/net/unix || fail "the forged names are not bound"
  serve_spec "$work/mine.yaml" mine 2 1 10
  mkdir -p "$work/u2run" "$work/u1run"
  chown "$U2" "$work/u2run"
  chown "$U1" "$work/u1run"
  rc=0
  (cd "$work/u2run" && setpriv --reuid="$U2" --regid="$(id -g "$U2")" --init-groups \
     env -u RELISH_SERVER HOME="$work/u2run" RELISH_MACHINE="$m" "$R" run "$work/mine.yaml" \
     --db "$work/u2run/run.db" --devices "$work/devices.yaml") >"$work/u2run.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "$U2's relish run was refused beside a forged announcement (exit $rc): $(tail -3 "$work/u2run.out")"
  rc=0
  (cd "$work/u1run" && setpriv --reuid="$U1" --regid="$(id -g "$U1")" --init-groups \
     env -u RELISH_SERVER HOME="$work/u1run" RELISH_MACHINE="$m" "$R" run "$work/mine.yaml" \
     --db "$work/u1run/run.db" --devices "$work/devices.yaml") >"$work/u1run.out" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q "a relish service owns this machine's devices (pid [0-9]*" "$work/u1run.out" ||
    fail "$U1's own announcement did not refuse $U1's relish run (exit $rc): $(tail -3 "$work/u1run.out")"
  echo "presence: $U2 ran beside $U1's forged announcement; $U1's own run: $(tail -1 "$work/u1run.out")"
  touch "$work/spoof.stop"
  wait "$sp" 2>/dev/null || true
  victim_ok
}

# ---- longname: a submission's own file name against the error buffer -----------
# Found by fuzz_api_routes: a spec with two errors under a "name" longer than
# the 1 KiB error message made the parser write past the message's buffer
# (counted from the end of the truncated "N errors in NAME:" line): the
# sanitized service stopped, a release build wrote on its stack.
attack_longname() {
  victim_start
  local body out n
  body="$work/longname.json"
  # names of 1,000 to 1,040 bytes end the first line just past the
  # buffer (where the sanitizer's red zone is), 5,000 far beyond it
  for n in $(seq 1000 1040) 5000; do
    $PY -c 'import json, sys; json.dump({"spec": "name: attack-longname\nbogus: 1\nalso: 2\n", "name": "n" * int(sys.argv[2])}, open(sys.argv[1], "w"))' "$body" "$n"
    chmod 644 "$body"
    out=$(as "$U1" curl -s --max-time 20 -w '\n%{http_code}' --unix-socket "$sock" -H 'Content-Type: application/json' \
      --data-binary "@$body" http://relish/api/v1/experiments || true)
    [ "${out##*$'\n'}" = 400 ] || fail "a spec with two errors under a $n-byte name: $(printf '%s' "$out" | cut -c1-300)"
    kill -0 "$spid" 2>/dev/null || fail "the service died (a $n-byte name)"
  done
  echo "longname: 42 names of 1,000-5,000 bytes answered 400: $(printf '%s' "$out" | head -1 | cut -c1-100)..."
  victim_ok
}

# ---- image: a podman transport instead of an image ------------------------------
# The engine runs as root: docker-archive:PATH (or oci-archive:, dir:, ...)
# would have it read a file of $U1's choosing, even one only root may
# read, import it and move the tags it carries onto images other users'
# specs name.  Refused as a spec error, before any engine sees it.
attack_image() {
  victim_start
  local img out rc
  printf 'not an archive\n' >"$work/root-only.tar"
  chmod 600 "$work/root-only.tar"
  for img in "docker-archive:$work/root-only.tar" "oci-archive:root-only.tar" "dir:/root" \
             "containers-storage:[overlay@/var/lib/containers/storage]x"; do
    aspec "$work/img.yaml" attack-image 1 1 10 "  executor: podman
  image: \"$img\""
    out=$(post_spec "$U1" "$work/img.yaml" || true)
    [ "${out##*$'\n'}" = 400 ] && printf '%s' "$out" | grep -q "trial.image: expected an image reference.*not a transport" ||
      fail "image $img was not refused as a transport: $out"
  done
  set +e
  out=$(as "$U1" "$R" submit img.yaml 2>&1); rc=$?
  set -e
  [ "$rc" = 2 ] && printf '%s' "$out" | grep -q "not a transport" || fail "relish submit of a transport: exit $rc: $out"
  echo "image: 4 transports answered 400, relish submit exit 2: $(printf '%s' "$out" | head -1 | cut -c1-160)"
  victim_ok
}

# ---- fifo: a failure's explanation opens nothing a user chose -------------------
# A trial that fails on a Python import gets a hint about which Python ran.
# Finding it meant looking the program up on the spec's PATH and reading
# its "#!" line, as root, on the service's one loop: a trial that swapped
# its script for a FIFO before failing held the loop (every user's work,
# /healthz, even SIGTERM) until someone wrote to it, and a PATH through
# $U2's 0700 folder read the first line of $U2's program.
one_trial_spec() { # FILE NAME COMMAND-JSON [ENV-YAML]
  cat >"$1" <<S
name: $2
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 7, max_trials: 1, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: $3
  resources: {memory: 32MiB, cpus: 1}
  retries: 0
${4:-}
S
  chmod 644 "$1"
}
attack_fifo() {
  victim_start
  local d=$work/u1fifo secret out rc t0 t1
  secret="secret-interp-$RANDOM$RANDOM"
  mkdir -p "$d/bin" "$work/u2prog"
  printf '#!/opt/%s/python9\nprint(1)\n' "$secret" >"$work/u2prog/trainer"
  chmod 755 "$work/u2prog/trainer"
  chown -R "$U2" "$work/u2prog"
  chmod 700 "$work/u2prog"
  # U1's programs: trainer fails on an import, fifo also leaves a FIFO
  # where it was
  printf '#!/bin/sh\necho "ModuleNotFoundError: No module named %s"\nexit 1\n' "'numpy'" >"$d/bin/trainer"
  printf '#!/bin/sh\necho "ModuleNotFoundError: No module named %s"\nrm -f "$0" && mkfifo -m 644 "$0"\nexit 1\n' \
    "'numpy'" >"$d/bin/fifo"
  chmod 755 "$d/bin/trainer" "$d/bin/fifo"
  chown -R "$U1" "$d"
  # the leak: U2's program first on the PATH (U1 cannot search its
  # folder, so U1's own runs)
  one_trial_spec "$work/leak2.yaml" attack-fifo-leak '["trainer"]' "  env: {PATH: \"$work/u2prog:$d/bin\"}"
  set +e
  out=$(as "$U1" timeout 60 "$R" submit leak2.yaml --follow 2>&1); rc=$?
  set -e
  echo "fifo (leak): exit $rc: $(printf '%s' "$out" | grep -m1 ModuleNotFoundError | cut -c1-240)"
  case $out in *"$secret"*) fail "the first line of $U2's program reached $U1: $out" ;; esac
  [ "$rc" = 1 ] && printf '%s' "$out" | grep -q 'ModuleNotFoundError.*found on PATH=' ||
    fail "the import failure was not reported with its PATH: exit $rc: $out"
  # the FIFO: the failure is explained, and the service answers meanwhile
  one_trial_spec "$work/fifo.yaml" attack-fifo "[\"$d/bin/fifo\"]"
  set +e
  out=$(as "$U1" timeout 60 "$R" submit fifo.yaml --follow 2>&1); rc=$?
  set -e
  [ -p "$d/bin/fifo" ] || fail "the trial did not leave its FIFO: $out"
  t0=$(date +%s%N)
  if ! curl -sf --max-time 5 --unix-socket "$sock" http://relish/healthz >/dev/null; then
    (echo x >"$d/bin/fifo" &) # let the service go on for the cases after
    fail "the service does not answer once the trial left a FIFO (submit exit $rc)"
  fi
  t1=$(date +%s%N)
  [ "$rc" = 1 ] && printf '%s' "$out" | grep -q 'ModuleNotFoundError' ||
    fail "the FIFO trial's failure was not reported: exit $rc: $out"
  echo "fifo: the trial failed leaving a FIFO; /healthz answered in $(( (t1 - t0) / 1000000 )) ms"
  victim_ok
}

# ---- termesc: escape sequences through a trial's output --------------------------
# A line that misses the metric format is kept as the trial's warning,
# which relish status and submit --follow show to its owner, to root and
# (read: all) to everyone: as the trial printed it, it set the window title
# and cleared the screen of whoever looked.
attack_termesc() {
  victim_start
  local out
  printf '#!/bin/sh\nprintf "RELISH \\033]0;PWNED\\007\\033[2J\\302\\233 epoch=zz\\n"\nexit 1\n' >"$work/esc.sh"
  chmod 755 "$work/esc.sh"
  one_trial_spec "$work/esc.yaml" attack-termesc "[\"$work/esc.sh\"]"
  set +e
  out=$(as "$U1" timeout 60 "$R" submit esc.yaml --follow 2>&1)
  set -e
  for who in "$U1" root; do
    if [ "$who" = root ]; then
      out=$out$(RELISH_SERVER="unix:$sock" "$R" status attack-termesc 2>&1 || true)
    else
      out=$out$(as "$who" "$R" status attack-termesc 2>&1 || true)
    fi
  done
  printf '%s' "$out" | grep -q 'is not a metric line' || fail "the warning was not shown: $out"
  ! printf '%s' "$out" | LC_ALL=C grep -q $'[\x1b\x07]\|\xc2\x9b' ||
    fail "a control byte reached the terminal: $(printf '%s' "$out" | od -c | head -5)"
  printf '%s' "$out" | grep -qF 'RELISH \x1b]0;PWNED\x07\x1b[2J\xc2\x9b epoch=zz' ||
    fail "the line is not shown escaped: $out"
  echo "termesc: shown as $(printf '%s' "$out" | grep -m1 -o 'RELISH .x1b[^"]*')"
  victim_ok
}

all="conns envleak oracle logforge state presence longname image fifo termesc"
for c in ${ATTACKS:-$all}; do run_case "$c"; done
attack_summary || exit 1
serve_stop
