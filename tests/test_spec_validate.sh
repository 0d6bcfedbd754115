#!/usr/bin/env bash
# test_spec_validate.sh - `relish validate` on the real binary: exit 0 and
# the "ok" line for every shipped example spec, exit 2 and exactly the
# expected stderr line for every malformed case in tests/spec_cases/
# (see the README there), exit 2 for a missing file and bad usage.
set -u
: "${RELISH:?RELISH must name the relish binary}" "${RELISH_SRC:?}"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

examples=0
for f in "$RELISH_SRC"/examples/*/*.yaml "$RELISH_SRC"/examples/*/*.json; do
	[ -e "$f" ] || continue
	examples=$((examples + 1))
	if ! out=$("$RELISH" validate "$f" 2>"$tmp/err"); then
		echo "FAIL: $f should be valid: $(cat "$tmp/err")"; fail=1; continue
	fi
	# The ok line, then (container specs) what their containers are granted
	# beyond least privilege, one "  key: value" line each.
	first=${out%%$'\n'*}
	rest=${out#"$first"}
	case "$first" in
	"$f: ok ("*" parameter"*", search "*", schedule "*", policy "*")") ;;
	*) echo "FAIL: $f: unexpected output: $out"; fail=1 ;;
	esac
	case "$rest" in
	""|$'\n'"containers get more than least privilege:"$'\n'"  trial."*) ;;
	*) echo "FAIL: $f: unexpected grants: $rest"; fail=1 ;;
	esac
	"$RELISH" validate --json "$f" >"$tmp/json" 2>&1 || { echo "FAIL: --json $f"; fail=1; }
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["name"] and d["trial"]["command"]' \
		"$tmp/json" || { echo "FAIL: --json $f is not the expected JSON"; fail=1; }
	# --json is itself a spec: it validates, and reads back as the same spec.
	cp "$tmp/json" "$tmp/again.json"
	if ! "$RELISH" validate --json "$tmp/again.json" >"$tmp/json2" 2>"$tmp/err"; then
		echo "FAIL: validate --json $f does not validate as a spec: $(cat "$tmp/err")"; fail=1
	elif ! cmp -s "$tmp/json" "$tmp/json2"; then
		echo "FAIL: validate --json $f does not read back as the same spec:"
		diff "$tmp/json" "$tmp/json2" | head -10; fail=1
	fi
done
[ "$examples" -ge 1 ] || { echo "FAIL: no example specs found"; fail=1; }

exact=$("$RELISH" validate "$RELISH_SRC/examples/quickstart/quickstart.yaml")
[ "$exact" = "$RELISH_SRC/examples/quickstart/quickstart.yaml: ok (6 parameters, search tpe, schedule asha, policy relish)" ] ||
	{ echo "FAIL: quickstart line: $exact"; fail=1; }

cases=0
cd "$RELISH_SRC/tests/spec_cases" || exit 1
for f in [0-9]*.yaml [0-9]*.json; do
	cases=$((cases + 1))
	"$RELISH" validate "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || { echo "FAIL: $f: exit $rc, expected 2"; fail=1; }
	[ -s "$tmp/out" ] && { echo "FAIL: $f: printed on stdout: $(cat "$tmp/out")"; fail=1; }
	if ! diff -u "${f%.*}.expect" "$tmp/err" >"$tmp/diff"; then
		echo "FAIL: $f:"; cat "$tmp/diff"; fail=1
	fi
done
[ "$cases" -ge 30 ] || { echo "FAIL: only $cases cases"; fail=1; }

"$RELISH" validate "$tmp/no-such.yaml" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: missing file exit $rc"; fail=1; }
grep -q "no-such.yaml: cannot open: No such file or directory" "$tmp/err" || { echo "FAIL: missing file message: $(cat "$tmp/err")"; fail=1; }
"$RELISH" validate 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: no argument exit $rc"; fail=1; }
"$RELISH" validate --frobnicate x.yaml 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: bad option exit $rc"; fail=1; }

echo "examples: $examples valid, cases: $cases malformed"
exit $fail
