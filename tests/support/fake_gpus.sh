# fake_gpus.sh - sourced by the live-run tests that need GPUs on a machine
# without any: makes the test's scratch folder ($work, removed on exit unless
# KEEP is set), defines fail(), and points relish at the NVML stand-in
# (tests/support/libnvidia-ml-standin.c) scripted with two 8 GiB GPUs,
# GPU-fake-0 and GPU-fake-1, whose per-process memory comes from
# $work/state (fake trials append "DEV PID MIB" lines to it).
#   usage: . "$RELISH_SRC/tests/support/fake_gpus.sh" NAME
: "${RELISH:?path of the relish binary}" "${RELISH_BUILD:?build directory}" "${RELISH_SRC:?source dir}"
PY=/usr/bin/python3
work=$(mktemp -d "/tmp/relish-test-${1:-gpu}-XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset RELISH_DEVICES CUDA_MPS_PIPE_DIRECTORY
export RELISH_HOST_MEMORY=4GiB RELISH_HOST_CPUS=2
export RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml"
: >"$work/state"
cat >"$work/nvml" <<S
driver 550.54.15
device GPU-fake-0 8192 NVIDIA Stand-in 8GB
device GPU-fake-1 8192 NVIDIA Stand-in 8GB
state $work/state
S
