# web-lib.sh - what the dashboard tests share (sourced after serve-lib.sh):
# whether a browser test can run here, and the stand-in GPUs for a service.
#   web_need_browser   exit 77 (skipped, saying why) without chromium, node
#                      or playwright-core in the build, or a relish built
#                      without its dashboard; sets $PLAYWRIGHT
#   web_fake_gpus      two stand-in 8 GiB GPUs (NVML stand-in, as in
#                      tests/support/fake_gpus.sh) for the service started
#                      next; trials append to $GPUSTATE (writable by all)
web_need_browser() {
  if [ ! -x /usr/bin/chromium ]; then echo "SKIP: no /usr/bin/chromium (Debian package chromium)"; exit 77; fi
  if ! command -v node >/dev/null; then echo "SKIP: no node (Debian package nodejs)"; exit 77; fi
  PLAYWRIGHT=$RELISH_BUILD/web/node_modules/playwright-core/index.mjs
  if [ ! -f "$PLAYWRIGHT" ]; then
    echo "SKIP: playwright-core is not in $RELISH_BUILD/web (configure with -DRELISH_WEB=ON and the tests)"; exit 77
  fi
  if ! "$RELISH" serve --help >/dev/null 2>&1 || ! grep -q 'uPlot.iife.min.js' "$RELISH" ; then
    echo "SKIP: this relish was built without its dashboard (RELISH_WEB=OFF)"; exit 77
  fi
  # a browser needs a working sandbox-less headless start here (nested
  # containers may lack /dev/shm): try once, say why not
  if ! timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/chromium-probe" \
      --dump-dom about:blank >/dev/null 2>"$work/chromium-probe.err"; then
    echo "SKIP: chromium cannot start here: $(tail -2 "$work/chromium-probe.err" | tr '\n' ' ')"; exit 77
  fi
  rm -rf "$work/chromium-probe"
}

web_fake_gpus() {
  export RELISH_NVML_LIBRARY="$RELISH_BUILD/libnvidia-ml-standin.so" RELISH_NVML_SCRIPT="$work/nvml"
  GPUSTATE=$work/gpustate
  : >"$GPUSTATE"
  chmod 666 "$GPUSTATE"
  cat >"$work/nvml" <<S
driver 550.54.15
device GPU-fake-0 8192 NVIDIA Stand-in 8GB
device GPU-fake-1 8192 NVIDIA Stand-in 8GB
state $GPUSTATE
S
  cp "$RELISH_SRC/tests/support/gpu_web_trial.sh" "$work/bin/"
  chmod 755 "$work/bin/gpu_web_trial.sh"
}

# A spec NAME: TRIALS stand-in GPU trials (batch and lr searched), ASHA
# over 1..9 epochs, SLEEP seconds per epoch, CONCURRENT at once, packed.
web_spec() { # FILE NAME TRIALS SLEEP CONCURRENT
  cat >"$1" <<S
name: $2
objective: {metric: accuracy, mode: max}
search:
  algorithm: random
  seed: 5
  max_trials: $3
  max_concurrent: $5
  space:
    batch: {type: choice, values: [32, 64, 128, 256]}
    lr: {type: loguniform, low: 0.0001, high: 0.1}
schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}
trial:
  command: ["/bin/sh", "$work/bin/gpu_web_trial.sh", "{batch}", "$GPUSTATE", "$4", "{lr}"]
  resources: {gpus: 1, gpu_memory: 1536MiB, cpus: 0.1}
  retries: 0
sharing: {policy: pack}
S
  chmod 644 "$1"
}
