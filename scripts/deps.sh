#!/usr/bin/env bash
# Install the Debian packages relish needs to build, test, run its demo and
# its benchmarks.  Needs only bash, coreutils, dpkg and apt (what a bare
# Debian 12 has); root, or sudo.  Idempotent: packages already present are
# skipped, and apt is not touched at all when nothing is missing.  apt's
# output goes to a log that is printed only when it fails.
# Usage: scripts/deps.sh [build|web|test|demo|slurm|bench|all]
#   build  compiler, make, cmake, the C libraries (what `relish` needs)
#   test   build + web + cmocka and what the tests start (podman, sqlite3,
#          chromium, prometheus, python3-venv/pip/pandas, Slurm, ...), and
#          demo's Python libraries: tests/test_examples.sh runs every example
#   slurm  build + slurmctld, slurmd, the Slurm clients and munge
#          (scripts/slurm-up.sh: a private cluster for tests and demos)
#   web    build + nodejs and npm: the dashboard is built into relish
#          (docs/dashboard.md); npm is needed at build time only
#   demo   build + PyTorch and scikit-learn for the digits experiment
#   bench  test + demo + Optuna (the reference in scripts/bench-digits.sh)
set -euo pipefail

build_pkgs=(gcc libc6-dev make cmake pkg-config libsqlite3-dev libyaml-dev libjansson-dev
            libuv1-dev libmicrohttpd-dev libcurl4-openssl-dev
            libgsl-dev    # the GP sampler's linear algebra (src/search/gp_model.c)
            help2man)     # the manual pages, from the programs' --help (scripts/man.sh)
test_pkgs=(libcmocka-dev sqlite3 podman runc catatonit gnuplot-nox python3 time curl
           clang libclang-rt-14-dev   # clang: libFuzzer for tests/test_fuzz.sh
           chromium prometheus        # the dashboard's browser tests, /metrics scraped
           python3-venv python3-pip python3-pandas   # the Python client's tests
           systemd    # systemd-analyze verify: test_install checks the unit
           groff-base # test_install formats the manual pages as man would
           debhelper lintian build-essential)   # tests/test_deb.sh builds and checks the Debian package (dpkg-buildpackage checks build-essential)
# The dashboard's build (npm ci at build time).  A machine with another
# Node.js (NodeSource's nodejs ships its own npm) counts as having them.
web_pkgs=(nodejs npm)
demo_pkgs=(python3-torch python3-sklearn libopenblas0-pthread)
bench_pkgs=(python3-optuna)
# A private two-node Slurm for tests/test_run_slurm.sh (scripts/slurm-up.sh);
# relish itself talks to Slurm through these command-line tools only.
slurm_pkgs=(slurmctld slurmd slurm-client munge)

want=("${build_pkgs[@]}")
case "${1:-all}" in
  build) ;;
  web) want+=("${web_pkgs[@]}") ;;
  test) want+=("${web_pkgs[@]}" "${test_pkgs[@]}" "${demo_pkgs[@]}" "${slurm_pkgs[@]}") ;;
  slurm) want+=("${slurm_pkgs[@]}") ;;
  demo) want+=("${demo_pkgs[@]}") ;;
  bench|all) want+=("${web_pkgs[@]}" "${test_pkgs[@]}" "${demo_pkgs[@]}" "${bench_pkgs[@]}" "${slurm_pkgs[@]}") ;;
  *) echo "usage: $0 [build|web|test|demo|slurm|bench|all]" >&2; exit 2 ;;
esac

missing=()
have_node=0
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && have_node=1
for p in "${want[@]}"; do
  if [ "$have_node" = 1 ] && { [ "$p" = nodejs ] || [ "$p" = npm ]; }; then
    continue
  fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || {
    echo "deps: ${missing[*]} missing; run this as root (or install sudo):" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  }
  SUDO=(sudo)
fi
log=$(mktemp /tmp/relish-deps.XXXXXX)
echo "deps: installing ${#missing[@]} Debian packages (${missing[*]})"
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
if ! { "${SUDO[@]}" apt-get update -q &&
       "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "deps: apt-get failed; its last lines ($log):" >&2
  tail -n 25 "$log" >&2
  exit 1
fi
rm -f "$log"
echo "deps: installed in $(( $(date +%s) - start )) s"
