#!/usr/bin/env bash
# Install the Debian packages relish needs to build, test, run its demo and
# its benchmarks.  Needs only bash, coreutils, dpkg and apt (what a bare
# Debian 12 has); root, or sudo.  Idempotent: packages already present are
# skipped, and apt is not touched at all when nothing is missing.  apt's
# output goes to a log that is printed only when it fails.
# Usage: scripts/deps.sh [build|test|demo|bench|all]
#   build  compiler, make, cmake, the C libraries (what `relish` needs)
#   test   build + cmocka and what the tests start (podman, sqlite3, ...),
#          and demo's Python libraries: tests/test_examples.sh runs every example
#   demo   build + PyTorch and scikit-learn for the digits experiment
#   bench  test + demo + Optuna (the reference in scripts/bench-digits.sh)
set -euo pipefail

build_pkgs=(gcc libc6-dev make cmake pkg-config libsqlite3-dev libyaml-dev libjansson-dev
            libuv1-dev libmicrohttpd-dev libcurl4-openssl-dev)
test_pkgs=(libcmocka-dev sqlite3 podman runc catatonit gnuplot-nox python3 time curl
           clang libclang-rt-14-dev)  # clang: libFuzzer for tests/test_fuzz.sh
demo_pkgs=(python3-torch python3-sklearn libopenblas0-pthread)
bench_pkgs=(python3-optuna)

want=("${build_pkgs[@]}")
case "${1:-all}" in
  build) ;;
  test) want+=("${test_pkgs[@]}" "${demo_pkgs[@]}") ;;
  demo) want+=("${demo_pkgs[@]}") ;;
  bench|all) want+=("${test_pkgs[@]}" "${demo_pkgs[@]}" "${bench_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|demo|bench|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
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
