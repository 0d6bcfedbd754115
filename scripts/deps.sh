#!/usr/bin/env bash
# Install the Debian packages relish needs to build, test and run its
# examples.  Idempotent: packages already present are skipped, and apt is not
# touched at all when nothing is missing.  Usage: scripts/deps.sh [build|test|demo|all]
set -euo pipefail

build_pkgs=(gcc make cmake pkg-config libsqlite3-dev libyaml-dev libjansson-dev
            libuv1-dev libmicrohttpd-dev)
test_pkgs=(libcmocka-dev sqlite3 podman runc catatonit gnuplot-nox python3 time)
demo_pkgs=(python3-torch python3-sklearn python3-optuna libopenblas0-pthread)

want=("${build_pkgs[@]}")
case "${1:-all}" in
  build) ;;
  test) want+=("${test_pkgs[@]}") ;;
  demo) want+=("${demo_pkgs[@]}") ;;
  all) want+=("${test_pkgs[@]}" "${demo_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|demo|all]" >&2; exit 2 ;;
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
echo "deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
