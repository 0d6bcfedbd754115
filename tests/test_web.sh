#!/usr/bin/env bash
# test_web.sh - the web dashboard in a real browser (Debian's chromium,
# driven by playwright-core from the build's npm packages) against a real
# `relish serve` with two real users (useradd) and tokens over loopback
# TCP, running real experiments of a stand-in GPU trial on two stand-in
# GPUs (the NVML stand-in) with packing, so that segments share a GPU.
# tests/web/dashboard.mjs asserts what a person would check: trial counts
# as the API's, plots drawn with the right number of series, live updates
# without a reload, two segments sharing a GPU on the devices timeline,
# the trial page, another user's cancel refused and the owner's done.
# Screenshots of every page go to $RELISH_WEB_SHOTS (default: the test's
# temporary folder), taken once the main experiment has
# $RELISH_WEB_SHOT_TRIALS trials with a value (default 0; docs/dashboard.md's
# pictures: RELISH_WEB_SHOTS=$PWD/docs/img RELISH_WEB_SHOT_TRIALS=60).
# Skipped, saying why, without chromium, node or root (useradd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/web-lib.sh"
serve_lib_init web
web_need_browser
serve_users 2
web_fake_gpus
printf "%s %s\n%s %s\n" "$(head -c 18 /dev/urandom | od -An -tx1 | tr -d " \n")" "$U1" "$(head -c 18 /dev/urandom | od -An -tx1 | tr -d " \n")" "$U2" >"$work/tokens"
chmod 600 "$work/tokens"
TOKEN_A=$(awk 'NR==1 {print $1}' "$work/tokens")
TOKEN_B=$(awk 'NR==2 {print $1}' "$work/tokens")
printf 'tokens: %s\npolicy: pack\n' "$work/tokens" >"$work/config.yaml"
serve_start --listen 127.0.0.1:0 --config "$work/config.yaml"
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the log"
BASE=http://127.0.0.1:$port

# the page and its files come from the binary
curl -sf "$BASE/" | grep -q '<script type="module" src="/ui/app.js">' || fail "GET / is not the dashboard"
curl -sf -D "$work/h" -o /dev/null "$BASE/ui/uPlot.iife.min.js" || fail "no uPlot"
grep -qi "content-security-policy: default-src 'self'" "$work/h" || fail "assets without CSP: $(cat "$work/h")"

# main: long enough to be watched while it runs; slow: to be cancelled
web_spec "$work/main.yaml" "web-main-$RANDOM" 120 0.8 4
web_spec "$work/slow.yaml" "web-slow-$RANDOM" 4 5 1
# the other user's, so that two users share the GPUs
web_spec "$work/other.yaml" "web-other-$RANDOM" 30 0.8 2
MAIN=$(as "$U1" "$R" submit main.yaml | awk '{print $1}')
SLOW=$(as "$U1" "$R" submit slow.yaml | awk '{print $1}')
OTHER=$(as "$U2" "$R" submit other.yaml | awk '{print $1}')
[ -n "$MAIN" ] && [ -n "$SLOW" ] && [ -n "$OTHER" ] || fail "submit printed no ids"
# wait until a few trials have values (the plots have something to draw)
valued() { [ "$(api "/api/v1/experiments/$MAIN/trials" | grep -o '"objective":[0-9]' | wc -l)" -ge 4 ]; }
wait_for 60 valued

mkdir -p "${RELISH_WEB_SHOTS:=$work/shots}"
start=$(date +%s)
BASE=$BASE PLAYWRIGHT=$PLAYWRIGHT TOKEN_A=$TOKEN_A TOKEN_B=$TOKEN_B USER_A=$U1 USER_B=$U2 \
  MAIN=$MAIN SLOW=$SLOW OTHER=$OTHER SHOTS=$RELISH_WEB_SHOTS SHOT_TRIALS=${RELISH_WEB_SHOT_TRIALS:-0} \
  timeout 300 node "$RELISH_SRC/tests/web/dashboard.mjs" || fail "the browser checks failed (above)"
for p in experiments experiment trial devices queue; do
  [ -s "$RELISH_WEB_SHOTS/$p.png" ] || fail "no screenshot of $p"
done
echo "test_web: browser checks in $(( $(date +%s) - start )) s; screenshots in $RELISH_WEB_SHOTS"
