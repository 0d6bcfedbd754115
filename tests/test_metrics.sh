#!/usr/bin/env bash
# test_metrics.sh - relish serve's Prometheus metrics (GET /metrics) while
# a real experiment runs on two stand-in GPUs (the NVML stand-in):
#  - the exposition passes `promtool check metrics` (Debian's prometheus);
#  - the series a person looks for are there with values that fit the
#    run: an experiment running, GPU memory reserved on the GPU that runs
#    segments (label UUID, as NVIDIA's DCGM exporter's), the user's
#    attained GPU-seconds and running segments, request durations as a
#    histogram; no label names a trial or a segment;
#  - every metric of the code's table is in docs/dashboard.md and back;
#  - a real Prometheus, started here on loopback, scrapes the service
#    (its /api/v1/targets polled until the target is up) and answers a
#    query for a relish series with the GPU's UUID;
#  - `relish serve --read-only --db` of the same database answers its
#    store's series (and promtool passes them too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/support/serve-lib.sh"
. "$here/support/web-lib.sh"
serve_lib_init metrics
PY=/usr/bin/python3
command -v promtool >/dev/null && command -v prometheus >/dev/null ||
  { echo "SKIP: promtool or prometheus missing (Debian package prometheus)"; exit 77; }
web_fake_gpus
ppid_=
trap 'if [ -n "$ppid_" ]; then kill "$ppid_" 2>/dev/null || true; fi; serve_lib_cleanup' EXIT
serve_start --listen 127.0.0.1:0
port=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the log"
name=metrics-$RANDOM
web_spec "$work/m.yaml" "$name" 40 0.5 3
"$R" submit "$work/m.yaml" --server "unix:$sock" >/dev/null || fail "submit"
running_on_gpu() { curl -s "http://127.0.0.1:$port/metrics" | grep -q '^relish_gpu_segments_running{.*UUID="GPU-fake-0".*} [1-9]'; }
wait_for 60 running_on_gpu

curl -sf "http://127.0.0.1:$port/metrics" -D "$work/mh" -o "$work/metrics.txt" || fail "GET /metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$work/mh" || fail "content type: $(cat "$work/mh")"
promtool check metrics <"$work/metrics.txt" >"$work/promtool.out" 2>&1 ||
  fail "promtool check metrics: $(cat "$work/promtool.out")"
m=$work/metrics.txt
need() { grep -Eq "$1" "$m" || fail "no series matching $1 in: $(grep -v '^#' "$m" | head -40)"; }
need '^relish_experiments\{state="running"\} 1$'
need '^relish_trials\{state="running"\} [1-9]'
need '^relish_gpu_memory_reserved_bytes\{gpu="0",UUID="GPU-fake-0"\} [1-9][0-9]*$'
need '^relish_gpu_memory_total_bytes\{gpu="1",UUID="GPU-fake-1"\} 8589934592$'
need '^relish_user_segments_running\{user="root"\} [1-9]'
need '^relish_user_attained_gpu_seconds_total\{user="root"\} [0-9]'
need '^relish_user_fair_usage_gpu_seconds\{user="root"\} [0-9]'
need '^relish_http_request_duration_seconds_bucket\{method="GET",route="/metrics",le="\+Inf"\} [1-9]'
need '^relish_http_request_duration_seconds_count\{method="POST",route="/api/v1/experiments"\} 1$'
need '^relish_oom_replacements_total 0$'
need '^# TYPE relish_http_request_duration_seconds histogram$'
if grep -v '^#' "$m" | grep -Eq '(trial|segment|experiment)(_id)?="'; then
  fail "a label names a trial, segment or experiment: $(grep -E '(trial|segment|experiment)(_id)?="' "$m" | head -3)"
fi
# base units: bytes and seconds, never MiB or ms
if grep -E '^# TYPE ' "$m" | grep -Eiq '_(mib|mb|ms|millis)'; then fail "a metric in other than base units"; fi

# the code's table and docs/dashboard.md's name the same metrics
grep -o '^# HELP relish_[a-z_]*' "$m" | awk '{print $3}' | sort -u >"$work/code.names"
grep -o '^| `relish_[a-z_]*`' "$RELISH_SRC/docs/dashboard.md" | tr -d '|` ' | sort -u >"$work/doc.names"
diff "$work/code.names" "$work/doc.names" >"$work/names.diff" ||
  fail "docs/dashboard.md's metrics differ from the code's (< code, > doc): $(cat "$work/names.diff")"

# ---- a real Prometheus scrapes it ----
pport=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/prometheus.yml" <<Y
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: relish
    metrics_path: /metrics
    static_configs: [{targets: ["127.0.0.1:$port"]}]
Y
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$work/prometheus.log" 2>&1 &
ppid_=$!
P=http://127.0.0.1:$pport
target_up() { curl -s "$P/api/v1/targets" | grep -q '"health":"up"'; }
wait_for 90 target_up
answers() {
  curl -s "$P/api/v1/query" --data-urlencode 'query=relish_gpu_memory_total_bytes{UUID="GPU-fake-0"}' >"$work/q.json"
  grep -q '"UUID":"GPU-fake-0"' "$work/q.json" && grep -q '"value":\[' "$work/q.json"
}
wait_for 60 answers
curl -s "$P/api/v1/query" --data-urlencode 'query=sum(relish_user_attained_gpu_seconds_total)' | grep -q '"resultType":"vector","result":\[{' ||
  fail "Prometheus has no attained GPU-seconds"
echo "test_metrics: Prometheus scraped relish: $(head -c 300 "$work/q.json")"
kill "$ppid_"; wait "$ppid_" 2>/dev/null || true; ppid_=

# ---- read-only, after the service stopped ----
"$R" cancel "$name" --server "unix:$sock" >/dev/null || fail "cancel $name"
serve_stop
"$R" serve --read-only --db "$work/state/relish.db" --listen 127.0.0.1:0 \
  --listen "unix:$work/ro.sock" >"$work/ro.log" 2>&1 &
spid=$!
ro_up() { grep -q 'event=serve.listening addr=127' "$work/ro.log"; }
wait_for 20 ro_up
rport=$(sed -n 's/.*event=serve.listening addr=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/ro.log" | head -1)
curl -sf "http://127.0.0.1:$rport/metrics" -o "$work/ro.txt" || fail "read-only GET /metrics"
promtool check metrics <"$work/ro.txt" >"$work/promtool.out" 2>&1 || fail "promtool (read-only): $(cat "$work/promtool.out")"
grep -q '^relish_read_only 1$' "$work/ro.txt" || fail "read-only: no relish_read_only 1"
grep -Eq '^relish_experiments\{state="(cancelled|done)"\} 1$' "$work/ro.txt" || fail "read-only: experiments: $(grep relish_experiments "$work/ro.txt")"
! grep -q '^relish_gpu_' "$work/ro.txt" || fail "read-only service shows live GPU series"
out=$(curl -s -w ' %{http_code}' -X POST --unix-socket "$work/ro.sock" http://relish/api/v1/experiments/1/cancel)
printf '%s' "$out" | grep -q 'serve --read-only.* 403$' || fail "read-only cancel: $out"
echo "test_metrics: $(grep -c '^# TYPE' "$m") metrics, promtool clean, Prometheus scraped, read-only ok"
