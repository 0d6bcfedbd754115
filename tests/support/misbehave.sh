#!/bin/sh
# misbehave.sh BEHAVIOUR CTRIAL - a trial that misbehaves by parameter, for
# tests/test_run_bad.sh: maps one choice value to ctrial's knobs and execs
# it (same pid, same process group, so relish sees ctrial itself).
#   ok       trains normally
#   exit1    exits 1 at epoch 1
#   segv     dies by SIGSEGV at epoch 1 (ASan told not to catch it)
#   hang     sleeps forever at epoch 1 (the spec's timeout ends it)
#   oom      touches 200 MiB (more than the 64 MiB declared)
#   garbage  random bytes and a 10 MB unterminated line first
#   huge     80 MiB of log output first (the log is capped), then trains
# ctrial built with ASan (the sanitizer build) must not turn its deliberate
# 200 MiB "leak" into exit 1.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
b=$1
ct=$2
shift 2
case "$b" in
ok) exec "$ct" "$@" ;;
exit1) exec "$ct" --fail-at 1 "$@" ;;
segv) ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" exec "$ct" --segv-at 1 "$@" ;;
hang) exec "$ct" --hang-at 1 "$@" ;;
oom) exec "$ct" --alloc-mb 200 --sleep-ms 300 "$@" ;;
garbage) exec "$ct" --garbage "$@" ;;
huge) head -c 83886080 /dev/zero | tr '\0' 'x' | fold -w 1000; exec "$ct" "$@" ;;
*) echo "misbehave.sh: unknown behaviour $b" >&2; exit 2 ;;
esac
