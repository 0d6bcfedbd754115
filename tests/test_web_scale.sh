#!/usr/bin/env bash
# test_web_scale.sh - the dashboard at 10,000 trials: tests/support/mkbig
# writes a finished 10,000-trial run through the real store, `relish serve
# --read-only --db` shows it, and tests/web/scale.mjs checks in chromium
# that the experiment page holds all 10,000 trials while it draws a page of
# 50 rows (paginated), the learning curves the server selects (at most 40
# and the running ones), every trial in the history and parallel
# coordinates, and the devices timeline the API's segments; with 10,000
# experiments in the store (the big one and 9,999 small ones) the
# experiments page shows pages of 50, next, previous and filtered, as the
# API's; the parallel coordinates' axes follow the spec and their labels
# never touch; the devices timeline's labels never touch, its bars and
# memory chart share a time axis, and the host's memory chart is not
# flattened by a whole-host reservation (tests/web/scale.mjs).  It prints how
# long the page took (a figure, not a pass mark: bench/bench_web.sh
# measures it).  Skipped, saying why, without chromium or node.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/web-lib.sh"
serve_lib_init web-scale
web_need_browser
N=${RELISH_SCALE_TRIALS:-10000}
E=${RELISH_SCALE_EXPERIMENTS:-10000}
"$RELISH_BUILD/mkbig" "$work/big.db" "$N" "$E" >"$work/mkbig.out" || fail "mkbig: $(cat "$work/mkbig.out")"
"$R" serve --read-only --db "$work/big.db" --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
spid=$!
up() { grep -q 'event=serve.listening addr=127' "$work/serve.log"; }
wait_for 30 up
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
# ?order= takes asc or desc, and says so
code=$(curl -s -o "$work/order.json" -w '%{http_code}' "http://127.0.0.1:$port/api/v1/experiments?order=sideways")
[ "$code" = 400 ] && grep -q 'expected asc (oldest first) or desc' "$work/order.json" ||
  fail "?order=sideways: $code $(cat "$work/order.json")"
BASE=http://127.0.0.1:$port PLAYWRIGHT=$PLAYWRIGHT EXP=1 N=$N EXPS=$E \
  timeout 400 node "$RELISH_SRC/tests/web/scale.mjs" || fail "the scale checks failed (above)"
echo "test_web_scale: $(cat "$work/mkbig.out")"
