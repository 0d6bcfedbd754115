# attack-lib.sh - what the attack tests (test_serve_attacks*.sh) share,
# sourced after serve-lib.sh: specs with extra trial lines, the victim's
# experiment submitted before an attack and checked after it, cases run
# one by one in subshells (one failed case still lets the others run), the
# attack library that records who loaded it.
#   aspec FILE NAME TRIALS EPOCHS SLEEP-MS [LINES]  serve_spec plus LINES under trial:
#   victim_start / victim_ok [SECONDS]  $U2's experiment $victim: done, 3 trials completed
#                                       (VICTIM_EXTRA: its extra trial lines)
#   post_spec USER FILE                 POST FILE's text to the API as USER, straight
#                                       (no client-side check): body, then the status
#   reload_config TEXT                  $work/config.yaml := $base_config TEXT, SIGHUP, wait for the reload
#   run_case NAME                       attack_NAME in a subshell; tallies
#   serve_restart ARGS...               (in a case) SIGTERM the service, wait
#                                       for its exit, serve_start ARGS; the
#                                       new pid is left in $work/spid for...
#   serve_adopt_restarted               (after the cases) ... the test's
#                                       own shell: $spid is the running one
#   attack_summary                      one line; fails when a case failed,
#                                       exits 77 when every case was skipped
#   evil_so                             $work/evil.so: a process that loads it with
#                                       EVIL_DIR set leaves EVIL_DIR/euid-EUID.PID
PY=/usr/bin/python3
# A spec FILE NAME TRIALS EPOCHS SLEEP-MS [TRIAL-YAML-LINES]: the C trial
# through whoami.sh (serve-lib.sh), extra lines added under trial:.
aspec() {
  serve_spec "$1" "$2" "$3" "$4" "$5"
  if [ -n "${6:-}" ]; then
    $PY - "$1" "$6" <<'P'
import sys
path, extra = sys.argv[1], sys.argv[2]
text = open(path).read().replace("trial:\n", "trial:\n" + extra.rstrip("\n") + "\n", 1)
open(path, "w").write(text)
P
  fi
}

# The victim: $U2's small experiment, submitted before an attack and
# checked after it (victim_ok): done, every trial completed, none failed.
victim_start() {
  victim="victim-${attack_case:-0}"
  aspec "$work/$victim.yaml" "$victim" 3 2 50 "${VICTIM_EXTRA:-}"
  as "$U2" "$R" submit "$victim.yaml" >/dev/null || fail "the victim could not submit $victim"
}
victim_ok() {
  local t=${1:-120} i s
  for i in $(seq $((t * 10))); do
    s=$(api "/api/v1/experiments/$victim")
    case $s in *'"status":"done"'*) break ;; *'"status":"running"'*) ;; *) fail "victim $victim: $s" ;; esac
    sleep 0.1
  done
  case $s in *'"status":"done"'*) ;; *) fail "victim $victim not done after ${t}s: $s" ;; esac
  printf '%s' "$s" | grep -q '"completed":3,' && printf '%s' "$s" | grep -q '"failed":0' ||
    fail "victim $victim was harmed: $s"
}

post_spec() {
  local body
  body="$work/post-$(basename "$2").json"
  $PY -c 'import json, sys; json.dump({"spec": open(sys.argv[1]).read(), "name": sys.argv[1].rsplit("/", 1)[-1]}, open(sys.argv[2], "w"))' "$2" "$body"
  chmod 644 "$body"
  as "$1" curl -s --max-time 60 -w '\n%{http_code}' --unix-socket "$sock" -H 'Content-Type: application/json' \
    --data-binary "@$body" http://relish/api/v1/experiments
}

passed=() failed=() skipped=()
# A case that cannot run here exits 77 after its "SKIP: why" line: skipped,
# neither defended nor not.
run_case() {
  echo "---- attack: $1"
  attack_case=$1
  local rc=0
  ( "attack_$1" ) || rc=$?
  case $rc in
    0) passed+=("$1") ;;
    77) skipped+=("$1") ;;
    *) failed+=("$1") ;;
  esac
}

# One line; fails when a case failed, exits 77 (skipped) when none could run.
attack_summary() {
  echo "attacks tried: $((${#passed[@]} + ${#failed[@]})); defended: ${passed[*]:-none}; NOT defended: ${failed[*]:-none}; skipped here: ${skipped[*]:-none}"
  [ "${#failed[@]}" = 0 ] || return 1
  if [ "${#passed[@]}" = 0 ] && [ "${#skipped[@]}" -gt 0 ]; then exit 77; fi
  return 0
}

evil_so() {
  mkdir -p "$work/pwn"
  chmod 1777 "$work/pwn"
  cat >"$work/evil.c" <<'C'
/* records the effective uid of every process that loads it */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void evil(void)
{
	const char *d = getenv("EVIL_DIR");
	char p[512];
	if (!d)
		return;
	snprintf(p, sizeof p, "%s/euid-%u.%d", d, (unsigned)geteuid(), (int)getpid());
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0)
		close(fd);
}
C
  cc -shared -fPIC -o "$work/evil.so" "$work/evil.c" || fail "cannot build the attack library"
  chmod 755 "$work/evil.so"
}

# A case runs in a subshell, which cannot wait for the service its parent
# started: the exit is polled, and the new service's pid handed up in a file.
serve_restart() {
  local i
  kill -TERM "$spid"
  for i in $(seq 3000); do
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.05
  done
  kill -0 "$spid" 2>/dev/null && fail "relish serve still running 150 s after SIGTERM"
  grep -q 'event=serve.stopped rc=0' "$work/serve.log" || fail "relish serve did not stop cleanly"
  serve_start "$@"
  echo "$spid" >"$work/spid"
}
serve_adopt_restarted() {
  local i
  [ -s "$work/spid" ] || return 0
  spid=$(cat "$work/spid")
  rm -f "$work/spid"
  # not this shell's child: stopped here by polling, as serve_restart does
  kill -0 "$spid" 2>/dev/null || { spid=; return 0; }
  serve_stop() {
    kill -TERM "$spid"
    for i in $(seq 3000); do kill -0 "$spid" 2>/dev/null || { spid=; return 0; }; sleep 0.05; done
    fail "relish serve still running 150 s after SIGTERM"
  }
}
