#!/usr/bin/env bash
# test_install.sh - make install's layout (CMakeLists.txt, GNU conventions),
# staged with DESTDIR into a temporary folder from this build: bin/relish
# runs, bin/relish-runas beside it (a service started from the installed
# tree starts; a relish without the helper says how to get it), the docs
# are in share/doc/relish, the manual pages in share/man/man1, the examples in share/relish/examples (an installed spec validates, the trial program
# keeps its execute bit), and relish_trial.py sits where the prefix's
# python3 imports it from (importable with that folder on the path).
set -euo pipefail
: "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
stage=$(mktemp -d /tmp/relish-install-XXXXXX)
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix=/opt/relish-test
DESTDIR=$stage cmake --install "$RELISH_BUILD" --prefix "$prefix" >"$stage.log" 2>&1 ||
  fail "cmake --install: $(tail -5 "$stage.log")"
rm -f "$stage.log"
root=$stage$prefix
[ -x "$root/bin/relish" ] || fail "bin/relish missing"
"$root/bin/relish" --version | grep -q '^relish ' || fail "installed relish --version"
for f in README.md cli.md spec.md trials.md; do
  [ -f "$root/share/doc/relish/$f" ] || fail "share/doc/relish/$f missing"
done
# The manual pages (scripts/man.sh): relish(1), one relish-COMMAND(1) for
# every command relish --help lists and relish-runas(1), each titled and
# named for its command, its options from the command's own help, and
# none with a warning from groff (the formatter man uses).
man1=$root/share/man/man1
command -v help2man >/dev/null || fail "help2man is missing, so no manual pages were made (scripts/deps.sh test)"
cmds=$("$root/bin/relish" --help | awk '/^commands:/ {on = 1; next} on && /^$/ {exit} on {print $1}')
[ "$(echo "$cmds" | wc -l)" -ge 15 ] || fail "relish --help lists only: $cmds"
for page in relish $(echo "$cmds" | sed 's/^/relish-/') relish-runas; do
  f=$man1/$page.1
  [ -f "$f" ] || fail "share/man/man1/$page.1 missing"
  title=$(echo "$page" | tr '[:lower:]' '[:upper:]')
  grep -q "^\.TH $title \"1\"" "$f" || fail "$page.1: its title is not $title(1): $(grep '^\.TH' "$f")"
  grep -q "^$page \\\\- " "$f" || fail "$page.1: its NAME is not $page"
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -z "$f" 2>&1) || fail "groff $page.1: $warn"
    [ -z "$warn" ] || fail "groff warns about $page.1: $warn"
  fi
done
[ "$(ls "$man1" | wc -l)" = "$(( $(echo "$cmds" | wc -l) + 2 ))" ] ||
  fail "share/man/man1 holds pages of no command: $(ls "$man1")"
grep -q -- '^\\fB\\-\\-max\\-concurrent\\fR N' "$man1/relish-run.1" || fail "relish-run.1 lacks run's options"
grep -q 'root cannot be regained' "$man1/relish-runas.1" || fail "relish-runas.1 lacks what it does"
command -v groff >/dev/null || echo "test_install: groff is missing: the pages were not formatted (scripts/deps.sh test)"
ex=$root/share/relish/examples
[ -f "$ex/digits/digits.yaml" ] || fail "share/relish/examples/digits/digits.yaml missing"
[ -x "$ex/digits/train.py" ] || fail "train.py lost its execute bit"
[ -f "$ex/relish_trial.py" ] || fail "the examples' relish_trial.py missing"
"$root/bin/relish" validate "$ex/quickstart/quickstart.yaml" >/dev/null ||
  fail "the installed quickstart spec does not validate"
# The service unit and its snippets; the unit passes systemd-analyze
# verify (where systemd's tools are) with ExecStart pointing here.
pk=$root/share/relish/packaging
for f in relish.service relish.sysusers relish.tmpfiles relish.logrotate; do
  [ -f "$pk/$f" ] || fail "share/relish/packaging/$f missing"
done
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID$' "$pk/relish.service" || fail "the unit has no ExecReload"
grep -q '^StateDirectory=relish$' "$pk/relish.service" || fail "the unit has no StateDirectory"
if command -v systemd-analyze >/dev/null; then
  mkdir "$stage/unit"
  sed "s|/usr/bin/relish|$root/bin/relish|g" "$pk/relish.service" >"$stage/unit/relish.service"
  systemd-analyze verify "$stage/unit/relish.service" >"$stage/verify.out" 2>&1 ||
    fail "systemd-analyze verify relish.service: $(cat "$stage/verify.out")"
  [ ! -s "$stage/verify.out" ] || fail "systemd-analyze verify relish.service: $(cat "$stage/verify.out")"
fi
py=$(find "$root/lib" -name relish_trial.py -path '*dist-packages*' | head -1)
[ -n "$py" ] || fail "relish_trial.py not installed under lib/python*/dist-packages"
PYTHONPATH=$(dirname "$py") python3 -c 'import relish_trial; relish_trial.mode()' ||
  fail "the installed relish_trial.py does not import"
[ -f "$(dirname "$py")/relish/client.py" ] || fail "the Python package relish is not installed beside it"
(cd / && PYTHONPATH=$(dirname "$py") /usr/bin/python3 -c 'import relish, relish_trial; assert relish_trial is relish.trial; relish.Client("unix:/nonexistent")') ||
  fail "the installed package relish does not import"
# relish serve runs trials as their submitters through relish-runas, which
# it finds beside relish: installed there, a service started from the
# installed tree starts (as root, where it needs the helper); a relish
# without it says how to get it (issue 30 item 2).
[ -x "$root/bin/relish-runas" ] || fail "bin/relish-runas missing: relish serve cannot run trials as their submitters"
if [ "$(id -u)" = 0 ]; then
  st=$stage/state
  printf 'host:\n  memory: 1GiB\n  cpus: 1\n' >"$stage/devices.yaml"
  "$root/bin/relish" serve --state "$st" --devices "$stage/devices.yaml" >"$stage/serve.log" 2>&1 &
  spid=$!
  up=0
  for _ in $(seq 200); do
    if curl -sf --max-time 5 --unix-socket "$st/relish.sock" http://relish/api/v1/server >/dev/null 2>&1; then
      up=1; break
    fi
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.05
  done
  [ "$up" = 1 ] || { kill -9 "$spid" 2>/dev/null; fail "the installed relish serve did not start: $(cat "$stage/serve.log")"; }
  # ... and runs a trial as the user who submitted it (a real user,
  # made here and removed after), through the installed relish-runas.
  if command -v useradd >/dev/null && command -v setpriv >/dev/null; then
    u="rlti$(printf '%04x' $RANDOM)"
    useradd -M -d /nonexistent -s /usr/sbin/nologin "$u" || fail "useradd $u"
    trap 'pkill -9 -u "$u" 2>/dev/null || true; userdel "$u" 2>/dev/null || true; rm -rf "$stage"' EXIT
    chmod 755 "$stage"
    cat >"$stage/who.yaml" <<'S'
name: who
objective: {metric: accuracy, mode: max}
search: {algorithm: random, seed: 1, max_trials: 1, max_concurrent: 1,
         space: {x: {type: uniform, low: 0.0, high: 1.0}}}
schedule: {algorithm: none, resource: epoch, max: 1}
trial:
  command: ["/bin/sh", "-c", "id -u >\"$RELISH_CHECKPOINT_DIR/who\"; echo RELISH epoch=1 accuracy=0.5"]
  resources: {memory: 32MiB, cpus: 1}
S
    chmod 644 "$stage/who.yaml"
    (cd "$stage" && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
      env HOME="$stage" RELISH_SERVER="unix:$st/relish.sock" "$root/bin/relish" submit who.yaml) \
      >"$stage/submit.out" 2>&1 || fail "submit as $u: $(cat "$stage/submit.out")"
    done=
    for _ in $(seq 600); do
      done=$("$root/bin/relish" status --server "unix:$st/relish.sock" --state done --json |
        python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
      [ "$done" = 1 ] && break
      sleep 0.1
    done
    [ "$done" = 1 ] || fail "the installed service did not run $u's trial: $(tail -5 "$stage/serve.log")"
    who=$(find "$st/runs" -name who -type f | head -1)
    [ -n "$who" ] && [ "$(cat "$who")" = "$(id -u "$u")" ] ||
      fail "the trial did not run as $u (uid $(id -u "$u")): ${who:-no who file}: $(cat "$who" 2>/dev/null)"
    echo "ok: the installed relish serve ran $u's trial as uid $(cat "$who")"
  fi
  kill -TERM "$spid"
  rc=0; wait "$spid" || rc=$?
  [ "$rc" = 0 ] || fail "the installed relish serve exited $rc after SIGTERM: $(tail -3 "$stage/serve.log")"
  mkdir "$stage/alone"
  cp "$root/bin/relish" "$stage/alone/"
  rc=0
  "$stage/alone/relish" serve --state "$stage/state2" >"$stage/alone.log" 2>&1 || rc=$?
  [ "$rc" = 3 ] || fail "relish serve without relish-runas: exit $rc, want 3: $(cat "$stage/alone.log")"
  grep -q 'make install' "$stage/alone.log" && grep -q 'scripts/build.sh release relish-runas' "$stage/alone.log" ||
    fail "relish serve without relish-runas does not say how to get it: $(cat "$stage/alone.log")"
  echo "ok: the installed relish serve starts; without relish-runas: $(cat "$stage/alone.log")"
fi
echo "ok: installed under $prefix (staged): $(cd "$root" && find . -type f | wc -l) files"
