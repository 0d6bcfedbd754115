#!/usr/bin/env bash
# test_web_scale.sh - the dashboard at 10,000 trials: tests/support/mkbig
# writes a finished 10,000-trial run through the real store, `relish serve
# --read-only --db` shows it, and tests/web/scale.mjs checks in chromium
# that the experiment page holds all 10,000 trials while it draws a page of
# 50 rows (paginated), the learning curves the server selects (at most 40
# and the running ones), every trial in the history and parallel
# coordinates, and the devices timeline the API's segments.  It prints how
# long the page took (a figure, not a pass mark: bench/bench_web.sh
# measures it).  Skipped, saying why, without chromium or node.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/web-lib.sh"
serve_lib_init web-scale
web_need_browser
N=${RELISH_SCALE_TRIALS:-10000}
"$RELISH_BUILD/mkbig" "$work/big.db" "$N" >"$work/mkbig.out" || fail "mkbig: $(cat "$work/mkbig.out")"
"$R" serve --read-only --db "$work/big.db" --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
spid=$!
up() { grep -q 'event=serve.listening addr=127' "$work/serve.log"; }
wait_for 30 up
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
BASE=http://127.0.0.1:$port PLAYWRIGHT=$PLAYWRIGHT EXP=1 N=$N \
  timeout 400 node "$RELISH_SRC/tests/web/scale.mjs" || fail "the scale checks failed (above)"
echo "test_web_scale: $(cat "$work/mkbig.out")"
