#!/usr/bin/env bash
# Build the tiny image relish's container tests, benchmark and demo run in:
# an almost empty root file system (usr etc tmp proc sys dev run, the usual
# bin/sbin/lib/lib64 -> usr/... links, an /etc/passwd and /etc/group) that
# gets the host's /usr mounted read-only at run time, so a trial finds the
# host's Python, PyTorch and libraries without a registry (this machine has
# no network).  Made with `podman import` in a fraction of a second.
# Idempotent: an existing image is kept unless --force is given.
#
# Usage: scripts/podman-image.sh [--force] [IMAGE]   (default localhost/relish-host:latest)
# Env:   PODMAN (default podman; docker works too), CONTAINERS_CONF (default
#        scripts/containers.conf)
# Run the image with the mounts it needs (docs/containers.md):
#   podman run --rm --init --network none \
#     -v /usr:/usr:ro -v /etc/alternatives:/etc/alternatives:ro \
#     -v /etc/ld.so.cache:/etc/ld.so.cache:ro IMAGE CMD...
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
image=${1:-localhost/relish-host:latest}
podman=${PODMAN:-podman}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}

if [ "$force" = 0 ] && "$podman" image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# mktemp's 0700 would become the image's /: a trial that is not root (the
# default, docs/containers.md "Privileges") could not reach /bin/sh.
chmod 755 "$root"
mkdir -p "$root"/{usr,etc,tmp,proc,sys,dev,run,root,home}
chmod 1777 "$root/tmp"
if [ "$(basename "$podman")" = docker ]; then
  # docker's --init binds its init at /sbin/docker-init, which must not
  # lead into the read-only /usr: /sbin is a folder of its own here.
  mkdir "$root/sbin"
  : >"$root/sbin/docker-init"
  for d in bin lib lib64; do ln -s "usr/$d" "$root/$d"; done
else
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
fi
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
  >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
# Placeholders for the read-only mounts (they make the mount points files).
mkdir -p "$root/etc/alternatives"
: >"$root/etc/ld.so.cache"
quiet=(--quiet)
[ "$(basename "$podman")" = docker ] && quiet=() # docker import has no --quiet
tar -C "$root" -cf - . | "$podman" import "${quiet[@]}" \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
  --message 'relish: tiny root for trials that use the host /usr' \
  - "$image" >/dev/null
echo "podman-image: built $image" >&2
