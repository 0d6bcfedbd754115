#!/usr/bin/env bash
# test_layering.sh - no module reaches up (docs/architecture.md, "Layers").
#
# Every `#include "M/..."` in src/ is checked against one table: a module
# may include its own headers and those of modules in lower layers, plus
# the few same-layer pairs listed in `sideways`.  The HTTP API (api/) sits
# on the live driver; the service (serve/) runs the driver and the API; the
# CLI is on top: its --json shares the API's encoders and it talks to a
# server through the API's client.  The dashboard's embedded files (web/)
# depend on nothing; the API serves them.  Executors (exec/: the
# interface; process/, container/, slurm/: one folder per backend, the
# container one running its engine through the process one) know
# nothing of the scheduling core: what they share with it (how a segment
# ended, common/outcome.h) lives in common/.  The core (sched/) knows no
# spec: the policy vocabulary is its own (sched/policy.h), and the spec
# reads it.  A module missing from the
# table is an error, so that a new folder gets its layer on purpose.
set -euo pipefail
src=${RELISH_SRC:-$(cd "$(dirname "$0")/.." && pwd)}/src

declare -A layer=(
  [common]=0
  [spec]=1 [search]=1 [sched]=1 [web]=1
  [exec]=2 [telemetry]=2 [store]=2
  [process]=3 [container]=3 [slurm]=3
  [live]=4 [sim]=4
  [api]=5
  [serve]=6
  [cli]=7
)
# Same-layer includes that are allowed (from:to).
sideways=" spec:search search:spec spec:sched container:process "
# Lower-layer includes that are not (from:to).
forbidden=" exec:sched process:sched container:sched slurm:sched sched:spec "

fail=0
for dir in "$src"/*/; do
  m=$(basename "$dir")
  if [ -z "${layer[$m]+x}" ]; then
    echo "test_layering: src/$m/ has no layer; add it to tests/test_layering.sh" >&2
    fail=1
    continue
  fi
  while IFS=: read -r file line inc; do
    to=${inc#*\"}
    to=${to%%/*}
    [ "$to" = "$m" ] && continue
    why=
    if [ -z "${layer[$to]+x}" ]; then
      why="unknown module $to"
    elif [[ "$forbidden" == *" $m:$to "* ]]; then
      why="$m must not include $to"
    elif [ "${layer[$to]}" -gt "${layer[$m]}" ]; then
      why="$m (layer ${layer[$m]}) reaches up to $to (layer ${layer[$to]})"
    elif [ "${layer[$to]}" -eq "${layer[$m]}" ] && [[ "$sideways" != *" $m:$to "* ]]; then
      why="$m and $to are both layer ${layer[$m]}; not a listed pair"
    fi
    if [ -n "$why" ]; then
      echo "test_layering: ${file#"$src"/}:$line: $inc: $why" >&2
      fail=1
    fi
  done < <(grep -Hn '^#include "[a-z_]*/' "$dir"*.[ch] 2>/dev/null || true)
done
[ "$fail" -eq 0 ] && echo "test_layering: every include follows the layers"
exit "$fail"
