#!/usr/bin/env bash
# test_python_client.sh - the Python client (python/, `import relish`)
# installed with Debian's pip (`pip install ./python` into a venv over
# Debian's python3, nothing downloaded) and run against a real relish
# serve: submit a dict and a file, follow, trials_dataframe (params and
# final metrics as columns, the same as `relish export --what wide`),
# metrics_dataframe, a bad spec's message, cancel, TCP with a real user's
# token (refused another's experiment), a wrong token, no server
# (tests/python/client_check.py).  Then the examples' `import relish_trial`
# without installing anything: the same module as relish.trial.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
serve_lib_init pyclient
PY=/usr/bin/python3
"$PY" -c 'import ensurepip, pandas' 2>/dev/null ||
  { echo "SKIP: needs python3-venv, python3-pip and python3-pandas (scripts/deps.sh test)"; exit 77; }
serve_users 1
printf '%s %s\n' "$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')" "$U1" >"$work/tokens"
chmod 600 "$work/tokens"
printf 'tokens: %s\n' "$work/tokens" >"$work/config.yaml"
printf 'host:\n  memory: 4GiB\n  cpus: 4\n' >"$work/devices.yaml"
serve_start --listen 127.0.0.1:0 --config "$work/config.yaml" --devices "$work/devices.yaml"
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)

# install: pip builds in the source folder, so from a copy
cp -r "$RELISH_SRC/python" "$work/py-src"
"$PY" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv"
"$work/venv/bin/pip" install --no-index --no-cache-dir "$work/py-src" >"$work/pip.log" 2>&1 ||
  fail "pip install ./python: $(tail -5 "$work/pip.log")"
"$work/venv/bin/python" -c 'import relish, sys; assert "/venv/" in relish.__file__, relish.__file__' ||
  fail "relish is not imported from the venv"
# docs/trials.md's `import relish_trial` works once installed (it failed:
# only relish.trial was installed), the same module as relish.trial
(cd / && "$work/venv/bin/python" -c 'import relish_trial, relish.trial
assert relish_trial is relish.trial and "/venv/" in relish_trial.__file__, relish_trial
assert relish_trial.mode() == "oneshot"') || fail "import relish_trial after pip install ./python"
(cd "$work" && "$work/venv/bin/python" "$RELISH_SRC/tests/python/client_check.py" "$sock" "$port" \
  "$(awk '{print $1}' "$work/tokens")" "$U1" "$CTRIAL" "$work" "$R") || fail "the client checks failed (above)"

# the examples' import path, from the source tree, nothing installed
out=$(cd "$work" && env -u PYTHONPATH "$PY" -c "
import sys; sys.path.insert(0, '$RELISH_SRC/examples')
import relish_trial, relish.trial
assert relish_trial is relish.trial, (relish_trial, relish.trial)
assert hasattr(relish_trial, 'segments') and relish_trial.mode() == 'oneshot'
print(relish.trial.__file__)") || fail "import relish_trial from examples/"
case "$out" in "$RELISH_SRC/python/relish/trial.py") ;; *) fail "relish_trial came from $out" ;; esac
echo "test_python_client: pip install ./python, the client against a real service, relish_trial = relish.trial"
