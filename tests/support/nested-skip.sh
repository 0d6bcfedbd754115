#!/usr/bin/env bash
# nested-skip.sh ENGINE - for the container tests: exit 77 (ctest's
# "skipped", tests/tests.cmake) with one line saying why when this machine
# is itself a container (podman's /run/.containerenv, docker's /.dockerenv)
# and ENGINE cannot start a container in it, as on a bare Debian tried in
# podman (README); exit 0 otherwise.  Outside a container nothing is
# probed, so a broken engine there still fails its tests.
set -uo pipefail
engine=${1:-podman}
if [ ! -e /run/.containerenv ] && [ ! -e /.dockerenv ]; then
  exit 0
fi
here=$(cd "$(dirname "$0")/../.." && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/scripts/containers.conf}
why=
if ! command -v "$engine" >/dev/null; then
  why="$engine is not installed"
elif ! out=$(PODMAN=$engine "$here/scripts/podman-image.sh" 2>&1 &&
             "$engine" run --rm --network none -v /usr:/usr:ro localhost/relish-host /usr/bin/true 2>&1); then
  why=$(printf '%s\n' "$out" | grep -v '^\s*$' | tail -n 1 | cut -c1-160)
fi
[ -z "$why" ] && exit 0
echo "SKIP: inside a container, $engine cannot start containers: $why"
exit 77
