# serve-lib.sh - what the relish serve tests share (sourced, not run):
# real Unix users made for the test and removed after it, the service
# started on a temporary state folder, commands run as a user, waits on
# conditions (never fixed sleeps).
#
#   serve_lib_init NAME     temp folder $work (0755), binaries copied there
#                           ($R relish, $CTRIAL) so the test users can run
#                           them wherever the build is; cleanup on exit
#   serve_users N           N users ($U1..$UN, uids $UID1..), unique names;
#                           exit 77 (skipped, with the reason) when users
#                           cannot be made here (not root, no useradd)
#   serve_group NAME USER.. a group holding those users ($G_NAME)
#   serve_start ARGS...     relish serve --state $work/state ... in the
#                           background ($spid), its log in $work/serve.log;
#                           waits until the socket ($sock) answers
#   serve_stop              SIGTERM and wait (at most 150 s)
#   serve_wait_exit S WHAT  wait at most S seconds for $spid to exit, 0 or
#                           fail (saying where its threads were)
#   as USER CMD...          CMD as USER (its uid, gid and groups)
#   api PATH                GET PATH on the socket (as root; 30 s at most)
#   wait_for SECONDS CMD... until CMD succeeds, or fail; fails at once when
#                           the service ($spid) has exited meanwhile
# Every wait is bounded and says what it waited for: a test never hangs.
serve_lib_init() {
  : "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
  work=$(mktemp -d "/tmp/relish-test-$1-XXXXXX")
  chmod 755 "$work"
  spid=
  made_users=()
  made_groups=()
  trap serve_lib_cleanup EXIT
  unset RELISH_DEVICES RELISH_SERVER RELISH_TOKEN RELISH_TOKEN_FILE CUDA_MPS_PIPE_DIRECTORY
  mkdir -p "$work/bin"
  cp "$RELISH" "$RELISH_BUILD/relish-runas" "$RELISH_BUILD/ctrial" "$work/bin/"
  chmod 755 "$work/bin" "$work/bin/"*
  R=$work/bin/relish
  CTRIAL=$work/bin/ctrial
  sock=$work/state/relish.sock
}

serve_lib_cleanup() {
  if [ -n "${spid:-}" ]; then kill -9 "$spid" 2>/dev/null || true; fi
  # trials of the test users that are still running
  for u in "${made_users[@]}"; do pkill -9 -u "$u" 2>/dev/null || true; done
  sleep 0.2
  for u in "${made_users[@]}"; do userdel "$u" 2>/dev/null || true; done
  for g in "${made_groups[@]}"; do groupdel "$g" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}

fail() {
  echo "FAIL: $*" >&2
  [ -f "$work/serve.log" ] && grep -v 'event=driver' "$work/serve.log" | tail -15 >&2
  exit 1
}

serve_users() {
  if [ "$(id -u)" != 0 ]; then echo "SKIP: making test users needs root"; exit 77; fi
  if ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
    echo "SKIP: useradd or setpriv is missing"; exit 77
  fi
  local tag i name
  tag=$(printf '%04x%04x' $RANDOM $RANDOM)
  for i in $(seq "$1"); do
    name="rlt${tag}u$i"
    if ! useradd -M -d /nonexistent -s /usr/sbin/nologin "$name" 2>"$work/useradd.err"; then
      echo "SKIP: useradd failed: $(cat "$work/useradd.err")"; exit 77
    fi
    made_users+=("$name")
    eval "U$i=$name UID$i=$(id -u "$name")"
  done
}

serve_group() {
  local g="rlt$(printf '%04x' $RANDOM)$1" u
  shift
  groupadd "$g" || fail "groupadd $g"
  made_groups+=("$g")
  for u in "$@"; do usermod -a -G "$g" "$u" || fail "usermod $u"; done
  G_NAME=$g
}

serve_start() {
  "$R" serve --state "$work/state" --listen "unix:$sock" "$@" >>"$work/serve.log" 2>&1 &
  spid=$!
  local _
  for _ in $(seq 400); do
    curl -sf --max-time 5 --unix-socket "$sock" http://relish/api/v1/server >/dev/null 2>&1 && return 0
    kill -0 "$spid" 2>/dev/null || fail "relish serve exited: $(tail -5 "$work/serve.log")"
    sleep 0.05
  done
  fail "relish serve did not answer on $sock"
}

serve_stop() {
  kill -TERM "$spid"
  serve_wait_exit 150 "after SIGTERM"
}

# The service's threads and where each waits, for a failure message.
serve_threads() {
  local t
  for t in /proc/"$1"/task/*; do
    [ -r "$t/comm" ] || continue
    printf '  thread %s %s: %s %s\n' "${t##*/}" "$(cat "$t/comm" 2>/dev/null)" \
      "$(awk '{print $3}' "$t/stat" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null)"
  done
}

serve_wait_exit() { # SECONDS WHAT: $spid exits 0 within SECONDS, or fail
  local i rc
  for i in $(seq $(($1 * 20))); do
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$spid" 2>/dev/null; then
    local where
    where=$(serve_threads "$spid")
    kill -9 "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    spid=
    fail "relish serve still running $1 s $2; its threads (state, wait channel):
$where"
  fi
  rc=0
  wait "$spid" || rc=$?
  spid=
  [ "$rc" = 0 ] || fail "relish serve exited $rc $2"
}

as() {
  local u=$1
  shift
  (cd "$work" && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
    env HOME="$work" RELISH_SERVER="unix:$sock" "$@")
}

api() { curl -s --max-time 30 --unix-socket "$sock" "http://relish$1"; }

# RELOAD_CONFIG TEXT: the service's config file becomes $base_config (the
# test's keys every reload keeps, if any) and TEXT, SIGHUP, and wait until
# the service has read it (fails when it refused it)
reload_config() {
  local n
  n=$(grep -c 'event=serve.reload' "$work/serve.log" || true)
  printf '%s%s\n' "${base_config:-}" "$1" >"$work/config.yaml"
  kill -HUP "$spid"
  wait_for 10 sh -c "[ \$(grep -c 'event=serve.reload' '$work/serve.log') -gt $n ]"
  tail -3 "$work/serve.log" | grep -q 'event=serve.reload .*level=error\|level=error.*event=serve.reload' &&
    fail "the config was refused: $(grep 'event=serve.reload' "$work/serve.log" | tail -1)"
  return 0
}

wait_for() {
  local t=$1 i
  shift
  for i in $(seq $((t * 20))); do
    "$@" && return 0
    if [ -n "${spid:-}" ] && ! kill -0 "$spid" 2>/dev/null; then
      fail "relish serve (pid $spid) exited while waiting for: $*"
    fi
    sleep 0.05
  done
  fail "timed out after ${t}s waiting for: $*"
}

# A spec NAME with TRIALS trials of the C trial: one segment of EPOCHS
# epochs each, SLEEP ms per epoch; its trials write their uid and groups
# into their checkpoint folder (ckpt/who, whoami.sh), so a test can tell
# who ran them.
serve_spec() { # FILE NAME TRIALS EPOCHS SLEEP [CONCURRENT]
  # Written beside and renamed over: a trial of an earlier spec may be
  # starting it right now, and writing into a script being exec'd fails
  # with "Text file busy".
  cat >"$work/whoami.sh.$$" <<'W'
#!/bin/sh
# uid on the first line, groups on the second; whole or not at all
printf '%s\n%s\n' "$(id -u)" "$(id -G)" >"$RELISH_CHECKPOINT_DIR/who.tmp" &&
  mv "$RELISH_CHECKPOINT_DIR/who.tmp" "$RELISH_CHECKPOINT_DIR/who"
exec "$@"
W
  chmod 755 "$work/whoami.sh.$$"
  mv -f "$work/whoami.sh.$$" "$work/whoami.sh"
  cat >"$1" <<S
name: $2
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 7, max_trials: $3, max_concurrent: ${6:-2},
         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}
schedule: {algorithm: none, resource: epoch, max: $4}
trial:
  command: ["$work/whoami.sh", "$CTRIAL", "--x", "{x}", "--y", "{y}", "--sleep-ms", "$5"]
  resources: {memory: 32MiB, cpus: 1}
sharing: {policy: pack}
S
  chmod 644 "$1"
}
