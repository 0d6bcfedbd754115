#!/usr/bin/env bash
# mkfixtures.sh - writes tests/fixtures/store-vN.sql: a state database as
# relish of schema version N wrote it, for N from 1 to the current one
# (test_store_fixtures opens and migrates each; the current one's is there
# before the schema moves on, so a later version bump finds it made).  For
# each version it takes the last commit of this repository that wrote it
# (the parent of the commit that moved STORE_SCHEMA_VERSION on; HEAD for
# the current version), builds relish
# and the C trial there in a temporary folder, runs that commit's own
# examples/ctrial/ctrial.yaml cut down to 6 trials of at most 3 epochs with
# `relish run --db`, and dumps the database as SQL (sqlite3 .dump, with
# its PRAGMA user_version, which .dump leaves out).  Run from a clone with
# its history; the fixtures are committed, so the tests need neither.
# Usage: scripts/mkfixtures.sh [VERSION...]   (default: every one to the current)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
current=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\).*/\1/p' src/store/store.h)
versions=${*:-$(seq 1 "$current")}
tmp=$(mktemp -d /tmp/relish-fixtures-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p tests/fixtures
for v in $versions; do
  if [ "$v" = "$current" ]; then
    # the schema this tree writes: its own last commit (commit first)
    commit=$(git rev-parse HEAD)
  else
    next=$(git log --format=%H -S"#define STORE_SCHEMA_VERSION $((v + 1))" --reverse -- src/store/store.h | awk "NR == 1")
    [ -n "$next" ] || { echo "mkfixtures: no commit moves the schema past $v" >&2; exit 1; }
    commit=$(git rev-parse "$next^")
  fi
  src=$tmp/v$v
  mkdir -p "$src"
  git archive "$commit" | tar -x -C "$src"
  grep -q "#define STORE_SCHEMA_VERSION $v\$" "$src/src/store/store.h" ||
    { echo "mkfixtures: $commit does not write schema $v" >&2; exit 1; }
  echo "mkfixtures: schema $v from $(git log -1 --format='%h %s' "$commit" | cut -c1-80)"
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DRELISH_TESTS=OFF \
    -DRELISH_BENCH=OFF -DRELISH_WEB=OFF >"$src/build.log" 2>&1
  cmake --build "$src/build" -j 2 --target relish ctrial >>"$src/build.log" 2>&1 ||
    { tail -20 "$src/build.log" >&2; exit 1; }
  sed -e 's/max_trials: [0-9]*/max_trials: 6/' -e 's/^  max: [0-9]*/  max: 3/' \
    -e "s|command: \\[\"[^\"]*ctrial\"|command: [\"$src/build/ctrial\"|" -e 's/"20"/"1"/' \
    "$src/examples/ctrial/ctrial.yaml" >"$src/fixture.yaml"
  db=$src/fixture.db
  (cd "$src" && RELISH_DEVICES= "$src/build/relish" run fixture.yaml --db "$db" >"$src/run.log" 2>&1) ||
    { tail -20 "$src/run.log" >&2; exit 1; }
  [ "$(sqlite3 "$db" 'PRAGMA user_version')" = "$v" ] || { echo "mkfixtures: $db is not schema $v" >&2; exit 1; }
  out=tests/fixtures/store-v$v.sql
  {
    echo "-- A state database as relish of schema version $v wrote it: relish run of"
    echo "-- examples/ctrial/ctrial.yaml (6 trials, 3 epochs) at commit $(git rev-parse --short "$commit")."
    echo "-- Made by scripts/mkfixtures.sh; read by tests/test_store_fixtures.c."
    sqlite3 "$db" .dump
    echo "PRAGMA user_version = $v;"
  } >"$out"
  echo "mkfixtures: $out ($(wc -c <"$out") bytes, $(sqlite3 "$db" 'SELECT count(*) FROM trials') trials)"
done
