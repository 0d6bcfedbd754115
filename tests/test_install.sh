#!/usr/bin/env bash
# test_install.sh - make install's layout (CMakeLists.txt, GNU conventions),
# staged with DESTDIR into a temporary folder from this build: bin/relish
# runs, bin/relish-runas beside it (a service started from the installed
# tree starts; a relish without the helper says how to get it), the docs
# are in share/doc/relish, the examples in share/relish/examples (an installed spec validates, the trial program
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
ex=$root/share/relish/examples
[ -f "$ex/digits/digits.yaml" ] || fail "share/relish/examples/digits/digits.yaml missing"
[ -x "$ex/digits/train.py" ] || fail "train.py lost its execute bit"
[ -f "$ex/relish_trial.py" ] || fail "the examples' relish_trial.py missing"
"$root/bin/relish" validate "$ex/quickstart/quickstart.yaml" >/dev/null ||
  fail "the installed quickstart spec does not validate"
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
