#!/usr/bin/env bash
# test_devices_cli.sh - `relish devices` against the real binary: GPUs from
# the scripted NVML stand-in, no driver at all, a devices file, and the
# reservations of running segments read from a state database.
set -euo pipefail
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}"
PY=/usr/bin/python3
work=$(mktemp -d /tmp/relish-test-devices-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Fixed host figures so the expected output is exact.
export RELISH_HOST_MEMORY=4GiB RELISH_HOST_CPUS=2
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY

cat >"$work/nvml" <<'S'
driver 550.54.15
device GPU-standin-0 40960 NVIDIA Stand-in A100 40GB
device GPU-standin-1 81920 NVIDIA Stand-in H100 80GB
used 0 500
proc 0 4001 1000
proc 1 4002 3000
S

# 1. GPUs through the stand-in.
RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml" \
  "$RELISH" devices --json >"$work/out.json" 2>"$work/err"
[ ! -s "$work/err" ] || fail "unexpected notice: $(cat "$work/err")"
$PY - "$work/out.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "nvml" and d["driver"] == "550.54.15" and d["notice"] is None, d
g = d["devices"]
assert [x["uuid"] for x in g] == ["GPU-standin-0", "GPU-standin-1", "host"], g
assert g[0]["name"] == "NVIDIA Stand-in A100 40GB"
assert (g[0]["memory_total_mib"], g[0]["memory_used_mib"], g[0]["memory_free_mib"]) == (40960, 1500, 39460), g[0]
assert (g[1]["memory_total_mib"], g[1]["memory_used_mib"], g[1]["memory_free_mib"]) == (81920, 3000, 78920), g[1]
assert g[0]["is_gpu"] and not g[2]["is_gpu"]
# The host: TOTAL, USED and FREE are the machine's RAM (MemTotal, MemTotal -
# MemAvailable, MemAvailable), BUDGET what relish may reserve (RELISH_HOST_MEMORY).
mem = {l.split(":")[0]: int(l.split()[1]) // 1024 for l in open("/proc/meminfo")}
h = g[2]
assert h["memory_budget_mib"] == 4096 and h["compute_total"] == 2.0, h
assert abs(h["memory_total_mib"] - mem["MemTotal"]) <= 1, (h, mem["MemTotal"])
assert h["memory_used_mib"] + h["memory_free_mib"] == h["memory_total_mib"], h
assert abs(h["memory_free_mib"] - mem["MemAvailable"]) < 512, (h, mem["MemAvailable"])
assert [x["memory_budget_mib"] for x in g[:2]] == [40960, 81920], g
assert all(x["memory_reserved_mib"] is None and x["segments"] == [] for x in g)
P
# The same GPUs with a state database: NVML's used memory beside what relish
# reserved, and which segments (trials) share each device.
"$RELISH_BUILD/mkdb" --devices "$work/standin.db" GPU-standin
RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml" \
  "$RELISH" devices --json --db "$work/standin.db" >"$work/out.json"
$PY - "$work/out.json" <<'P'
import json, sys
g = json.load(open(sys.argv[1]))["devices"]
assert (g[0]["memory_used_mib"], g[0]["memory_reserved_mib"]) == (1500, 8500), g[0]
assert [(s["segment"], s["trial"]) for s in g[0]["segments"]] == [(1, 1), (2, 2)], g[0]
assert (g[1]["memory_used_mib"], g[1]["memory_reserved_mib"], g[1]["segments"]) == (3000, 0, []), g[1]
assert g[2]["memory_reserved_mib"] == 700 and [s["trial"] for s in g[2]["segments"]] == [4], g[2]
P
RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml" \
  "$RELISH" devices --db "$work/standin.db" >"$work/out.txt"
# OTHERS: memory of listed processes in no running segment's group (the
# scripted pids may or may not exist on this machine: any figure).
grep -Eq '^ *0 +NVIDIA Stand-in A100 40GB +GPU-standin-0 +40960 +1500 +39460 +40960 +[0-9]+ +8500  1\(t1\),2\(t2\)$' \
  "$work/out.txt" || fail "stand-in table row: $(cat "$work/out.txt")"

# 2. No driver: host only, said once on stderr.
RELISH_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$RELISH" devices --json >"$work/out.json" 2>"$work/err"
[ "$(cat "$work/err")" = "relish: no NVIDIA driver (/nonexistent/libnvidia-ml.so.1 not found): using the host only" ] ||
  fail "notice: $(cat "$work/err")"
$PY - "$work/out.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "host" and d["driver"] is None, d
assert d["notice"] == "no NVIDIA driver (/nonexistent/libnvidia-ml.so.1 not found): using the host only", d
assert [x["uuid"] for x in d["devices"]] == ["host"]
P

# 3. A devices file, and reservations from a state database.
cat >"$work/devices.yaml" <<'Y'
devices:
  - name: A100
    uuid: GPU-fake
    memory: 40GiB
    count: 2
host:
  memory: 16GiB
  cpus: 4
Y
# Segments 1-4 of trials 1-4 (tests/support/mkdb.c --devices): 6000 and
# 2500 MiB running on GPU-fake-0, 9000 completed on GPU-fake-1, 700 on the host.
"$RELISH_BUILD/mkdb" --devices "$work/state.db" GPU-fake
"$RELISH" devices --json --devices "$work/devices.yaml" --db "$work/state.db" >"$work/out.json"
$PY - "$work/out.json" "$work/devices.yaml" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == sys.argv[2], d
g = d["devices"]
assert [x["uuid"] for x in g] == ["GPU-fake-0", "GPU-fake-1", "host"], g
assert g[0]["memory_total_mib"] == 40960 and g[0]["memory_used_mib"] is None
assert g[0]["memory_reserved_mib"] == 8500, g[0]
assert [(s["segment"], s["trial"], s["memory_reserved_mib"]) for s in g[0]["segments"]] == [(1, 1, 6000), (2, 2, 2500)]
assert g[1]["memory_reserved_mib"] == 0 and g[1]["segments"] == []   # completed: not counted
assert g[2]["memory_budget_mib"] == 16384 and g[2]["compute_total"] == 4.0
assert g[2]["memory_reserved_mib"] == 700
P
# The same through RELISH_DEVICES, as a table.
RELISH_DEVICES="$work/devices.yaml" "$RELISH" devices --db "$work/state.db" >"$work/out.txt"
grep -Eq '^ *0 +A100 +GPU-fake-0 +40960 +- +- +40960 +- +8500  1\(t1\),2\(t2\)$' "$work/out.txt" \
  || fail "table row: $(cat "$work/out.txt")"
grep -q '^MPS: not running$' "$work/out.txt" || fail "MPS line: $(cat "$work/out.txt")"
grep -Eq '^DEV +NAME +UUID +TOTAL_MiB +USED_MiB +FREE_MiB +BUDGET_MiB +OTHERS_MiB +RESERVED_MiB +SEGMENTS$' \
  "$work/out.txt" || fail "table header: $(cat "$work/out.txt")"
# On an 80-column terminal no row is wider than 80.
COLUMNS=80 RELISH_DEVICES="$work/devices.yaml" "$RELISH" devices --db "$work/state.db" >"$work/out80.txt"
$PY -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 80 for l in open(sys.argv[1], encoding="utf-8")))' "$work/out80.txt" ||
  fail "a row wider than 80 columns: $(cat "$work/out80.txt")"

# 4. Errors: a bad devices file names file, line and field; bad flags are usage errors.
printf 'devices:\n  - name: A\n    memory: lots\n' >"$work/bad.yaml"
set +e
"$RELISH" devices --devices "$work/bad.yaml" 2>"$work/err"; rc=$?
set -e
[ "$rc" = 2 ] || fail "bad devices file: exit $rc"
grep -q "bad.yaml:3:13: devices\[0\].memory: expected a size like 40GiB, got \"lots\"" "$work/err" \
  || fail "message: $(cat "$work/err")"
set +e
"$RELISH" devices --frobnicate 2>/dev/null; rc=$?
"$RELISH" devices --devices "$work/devices.yaml" --db "$work/nonexistent.db" 2>"$work/err"; rc2=$?
set -e
[ "$rc" = 2 ] || fail "bad flag: exit $rc"
# A missing database is "not found" (3), as for the other read commands.
[ "$rc2" = 3 ] || fail "missing db: exit $rc2 $(cat "$work/err")"
grep -q 'no state database' "$work/err" || fail "missing db message: $(cat "$work/err")"
echo "test_devices_cli: ok"
