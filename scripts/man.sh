#!/usr/bin/env bash
# man.sh RELISH RELISH_RUNAS OUTDIR - the manual pages, made by help2man
# from the programs' own --help, so that a page never says what the
# program does not: relish(1), one relish-COMMAND(1) per command that
# `relish --help` lists (as git-commit(1) is to git), and relish-runas(1).
# The build runs it (CMakeLists.txt, where help2man is installed) and
# make install puts the pages in share/man/man1.  SOURCE_DATE_EPOCH, when
# set (Debian's builds set it), dates the pages.
set -euo pipefail
[ $# = 3 ] || { echo "usage: scripts/man.sh RELISH RELISH_RUNAS OUTDIR" >&2; exit 2; }
relish=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
runas=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
out=$3
command -v help2man >/dev/null || { echo "man.sh: help2man is missing (Debian: help2man)" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d /tmp/relish-man-XXXXXX)
trap 'rm -rf "$work"' EXIT

# The commands and their one-line descriptions, from relish --help: the
# lines "  NAME  description" between "commands:" and the next blank line.
"$relish" --help | awk '/^commands:/ {on = 1; next} on && /^$/ {exit}
  on && /^  [a-z]/ {name = $1; sub(/^  [a-z-]+ +/, ""); print name "\t" $0}' >"$work/commands"
[ -s "$work/commands" ] || { echo "man.sh: no commands in '$relish --help'" >&2; exit 1; }

# One page: help2man runs PROGRAM --help and --version.
page() { # PROGRAM NAME-LINE INCLUDE OUT
  help2man --no-info --no-discard-stderr --section=1 --name="$2" --include="$3" \
    --output="$4" "$1"
}

see_also() { # the other pages, one ".BR page (1)" line each, commas between
  local self=$1 line
  local -a pages=()
  while read -r line; do
    [ "$line" = "$self" ] || pages+=("$line")
  done < <({ echo relish; sed 's/\t.*//; s/^/relish-/' "$work/commands"; echo relish-runas; })
  local i n=${#pages[@]}
  for ((i = 0; i < n; i++)); do
    if ((i + 1 < n)); then printf '.BR %s (1),\n' "${pages[i]}"; else printf '.BR %s (1)\n' "${pages[i]}"; fi
  done
}

docs_para=".PP
The full documentation is in /usr/share/doc/relish (Markdown, README.md first;
docs/ in the source tree), or under the prefix relish was installed to."

{
  echo '[SEE ALSO]'
  see_also relish
  echo "$docs_para"
} >"$work/relish.h2m"
page "$relish" "hyperparameter optimisation that shares GPUs among trials" \
  "$work/relish.h2m" "$out/relish.1"

while IFS=$'\t' read -r cmd desc; do
  # a program named relish-CMD, so that the page's title and NAME are its
  shim=$work/relish-$cmd
  # (help2man takes the title from --version's first line: relish-CMD's)
  printf '#!/bin/sh\nif [ "$1" = --version ]; then %q version | sed "1s/^relish /relish-%s /"; exit; fi\nexec %q %q "$@"\n' \
    "$relish" "$cmd" "$relish" "$cmd" >"$shim"
  chmod +x "$shim"
  { echo '[SEE ALSO]'; see_also "relish-$cmd"; echo "$docs_para"; } >"$work/$cmd.h2m"
  page "$shim" "$desc" "$work/$cmd.h2m" "$out/relish-$cmd.1"
done <"$work/commands"

{ echo '[SEE ALSO]'; see_also relish-runas; echo "$docs_para"; } >"$work/runas.h2m"
page "$runas" "run a trial as its owner (started by relish serve)" \
  "$work/runas.h2m" "$out/relish-runas.1"
