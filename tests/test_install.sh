#!/usr/bin/env bash
# test_install.sh - make install's layout (CMakeLists.txt, GNU conventions),
# staged with DESTDIR into a temporary folder from this build: bin/relish
# runs, the docs are in share/doc/relish, the examples in
# share/relish/examples (an installed spec validates, the trial program
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
echo "ok: installed under $prefix (staged): $(cd "$root" && find . -type f | wc -l) files"
