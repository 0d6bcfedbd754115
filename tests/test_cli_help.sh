#!/usr/bin/env bash
# test_cli_help.sh - help and mistyped commands (src/cli/main.c): every
# command that `relish --help` lists answers -h, --help and `relish help
# CMD` on stdout with its usage line and exit 0, also with other arguments
# around; a mistyped command (also after `help`) exits 2 naming the closest
# command; a bare `relish` prints the list on stderr with exit 2.
set -euo pipefail
: "${RELISH:?path of the relish binary}"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(mktemp -d /tmp/relish-help-XXXXXX)
trap 'rm -rf "$out"' EXIT

"$RELISH" --help >"$out/list" || fail "relish --help: exit $?"
cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' "$out/list")
[ "$(echo "$cmds" | wc -w)" -ge 11 ] || fail "relish --help lists too few commands: $cmds"
for c in $cmds; do
  for form in "$c -h" "$c --help" "help $c" "$c --db /nonexistent.db -h" "$c x y --help"; do
    # shellcheck disable=SC2086 # form is a list of words
    if ! "$RELISH" $form >"$out/o" 2>"$out/e"; then
      fail "relish $form: exit $? ($(head -2 "$out/e"))"
    fi
    head -1 "$out/o" | grep -q "^usage: relish $c\b" ||
      fail "relish $form: stdout does not start with 'usage: relish $c': $(head -1 "$out/o")"
    [ -s "$out/e" ] && fail "relish $form wrote to stderr: $(head -2 "$out/e")"
  done
done
echo "ok: $(echo "$cmds" | wc -w) commands answer -h, --help and help CMD"

for form in "stauts" "help stauts"; do
  set +e
  # shellcheck disable=SC2086
  "$RELISH" $form >"$out/o" 2>"$out/e"
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "relish $form: exit $rc, expected 2"
  grep -q "unknown command 'stauts' (did you mean 'status'?)" "$out/e" ||
    fail "relish $form: no did-you-mean: $(cat "$out/e")"
done
set +e
"$RELISH" trails >/dev/null 2>"$out/e"; rc=$?
"$RELISH" >/dev/null 2>"$out/e2"; rc2=$?
"$RELISH" zzzzzz >/dev/null 2>"$out/e3"; rc3=$?
set -e
[ "$rc" = 2 ] && grep -q "did you mean 'trials'" "$out/e" || fail "trails: $(cat "$out/e")"
[ "$rc2" = 2 ] && grep -q '^usage: relish COMMAND' "$out/e2" || fail "bare relish: exit $rc2"
[ "$rc3" = 2 ] && ! grep -q "did you mean" "$out/e3" || fail "zzzzzz got a suggestion: $(cat "$out/e3")"
echo "ok: mistyped commands get the closest name, exit 2"
