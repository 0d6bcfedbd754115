#!/usr/bin/env bash
# test_trial_helper.sh - the Python trial helper's checkpoints
# (examples/relish_trial.py): plain data is saved as JSON, anything else
# (a set, a scikit-learn model) with joblib when it is imported or pickle,
# and seg.load() reads each back equal; the write is atomic (no .tmp left);
# outside relish seg.save() keeps nothing and says so once on stderr.
set -euo pipefail
: "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-helper-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$work/t.py" <<P
import json, os, sys
sys.path.insert(0, "$RELISH_SRC/examples")
import relish_trial as rt
case = sys.argv[1]
seg = next(rt.segments())
d = seg.checkpoint_dir
if case == "json":
    seg.save({"epoch": 3, "lr": 0.1})
    assert json.load(open(os.path.join(d, "checkpoint.pt"))) == {"epoch": 3, "lr": 0.1}
    assert seg.load() == {"epoch": 3, "lr": 0.1}
elif case == "pickle":
    assert "joblib" not in sys.modules and "torch" not in sys.modules
    state = {"epoch": 2, "seen": {1, 2, 3}}          # a set is not JSON
    seg.save(state)
    assert open(os.path.join(d, "checkpoint.pt"), "rb").read(1) == b"\\x80"  # a pickle
    assert seg.load() == state, seg.load()
elif case == "sklearn":
    from sklearn.datasets import load_digits
    from sklearn.linear_model import SGDClassifier
    assert "joblib" in sys.modules                     # scikit-learn imports it
    x, y = load_digits(return_X_y=True)
    clf = SGDClassifier(random_state=0).partial_fit(x, y, classes=list(range(10)))
    seg.save({"epoch": 1, "model": clf})
    back = seg.load()
    assert back["epoch"] == 1 and type(back["model"]).__name__ == "SGDClassifier"
    assert (back["model"].predict(x) == clf.predict(x)).all()
elif case == "outside":
    seg.save({"epoch": 1})
    seg.save({"epoch": 2})
    assert seg.load() is None
assert not [f for f in os.listdir(d or ".") if f.endswith(".tmp")], os.listdir(d or ".")
print("ok", case)
P
for c in json pickle; do
  rm -rf "$work/ck"
  RELISH_CHECKPOINT_DIR="$work/ck" RELISH_RESOURCE_TO=1 $PY "$work/t.py" $c || fail "$c"
done
if $PY -c 'import sklearn' 2>/dev/null; then
  rm -rf "$work/ck"
  RELISH_CHECKPOINT_DIR="$work/ck" RELISH_RESOURCE_TO=1 $PY "$work/t.py" sklearn || fail sklearn
else
  echo "(scikit-learn not installed: its case left out)"
fi
(cd "$work" && env -u RELISH_CHECKPOINT_DIR $PY "$work/t.py" outside) 2>"$work/err" || fail "outside: $(cat "$work/err")"
[ "$(grep -c 'relish_trial: not run by relish (no RELISH_CHECKPOINT_DIR): seg.save() keeps nothing' "$work/err")" = 1 ] ||
  fail "outside relish: not said exactly once: $(cat "$work/err")"
echo "ok: trial helper checkpoints"
