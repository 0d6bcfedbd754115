#!/usr/bin/env bash
# test_deb.sh - the Debian package built from the tree (debian/, issue 27
# item 5): dpkg-buildpackage -b -us -uc in a copy of the tree (the tree
# stays clean), with the profile pkg.relish.noweb (no npm, no network: the
# dashboard's build is test_web's) and without debug symbols; lintian
# reports no error (its warnings are printed: docs/serve.md lists the ones
# known); the package, unpacked into a scratch root with dpkg-deb (no
# container, nothing installed on this machine), holds relish and
# relish-runas (which run from there), the unit where systemd reads it
# (ExecStart the installed relish, neither enabled nor started by the
# maintainer scripts), the sysusers, tmpfiles and logrotate snippets, the
# docs (serve.md uncompressed, as the unit names it), the manual pages, the examples (one
# validates with the unpacked relish) and the Python package.  Skipped,
# saying so, where dpkg-buildpackage or debhelper is missing; lintian's
# check is skipped, saying so, where lintian is.
set -euo pipefail
: "${RELISH_SRC:?source dir}"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in dpkg-buildpackage dh dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is missing (Debian: dpkg-dev, debhelper; scripts/deps.sh test)"; exit 77; }
done
work=$(mktemp -d /tmp/relish-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
src=$work/relish
mkdir "$src"
if git -C "$RELISH_SRC" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$RELISH_SRC" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$src"
else
  tar -C "$RELISH_SRC" --exclude=./build --exclude=./web/node_modules -cf - . | tar -xf - -C "$src"
fi
start=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=${JOBS:-2}" \
  dpkg-buildpackage -b -us -uc --build-profiles=pkg.relish.noweb) >"$work/build.log" 2>&1 ||
  fail "dpkg-buildpackage: $(tail -25 "$work/build.log")"
deb=$(ls "$work"/relish_*_*.deb)
echo "test_deb: built $(basename "$deb") in $(( $(date +%s) - start )) s"

if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$work"/relish_*.changes >"$work/lintian.out" 2>&1 || true
  # (nothing at all when lintian is content)
  { grep -v '^running with root privileges' "$work/lintian.out" || true; } | sed 's/^/test_deb: lintian: /'
  grep -q '^E: ' "$work/lintian.out" && fail "lintian reports errors"
  # every program has its manual page (scripts/man.sh)
  grep -q ': no-manual-page ' "$work/lintian.out" && fail "lintian: a program without a manual page"
  grep -q '^W: ' "$work/lintian.out" && echo "test_deb: lintian warns (above)"
else
  echo "test_deb: SKIP lintian's check: lintian is missing (scripts/deps.sh test installs it)"
fi

# The package's fields and maintainer scripts
dpkg-deb -f "$deb" Package Architecture Depends >"$work/fields"
grep -q '^Package: relish$' "$work/fields" || fail "Package: $(cat "$work/fields")"
grep -q '^Depends: .*libsqlite3-0.*' "$work/fields" && grep -q '^Depends: .*libuv1' "$work/fields" ||
  fail "Depends lacks the shared libraries relish links: $(cat "$work/fields")"
mkdir "$work/ctl"
dpkg-deb -e "$deb" "$work/ctl"
# neither started (no deb-systemd-invoke) nor enabled on a first install
# (an enable only where the operator had it enabled before an upgrade)
pi=$work/ctl/postinst
[ -f "$pi" ] || fail "no postinst (the unit's state is not tracked)"
grep -q 'deb-systemd-invoke' "$pi" && fail "the maintainer scripts start the service: $(grep deb-systemd-invoke "$pi")"
if grep -q 'deb-systemd-helper enable' "$pi" && ! grep -B2 'deb-systemd-helper enable' "$pi" | grep -q 'was-enabled'; then
  fail "the maintainer scripts enable the service on install"
fi
grep -q 'systemd-sysusers\|sysusers.d/relish.conf' "$pi" || fail "postinst does not make the relish-admin group"

# Unpacked into a scratch root
root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/relish usr/bin/relish-runas; do
  [ -x "$root/$f" ] || fail "$f missing"
done
"$root/usr/bin/relish" --version | grep -q '^relish ' || fail "the packaged relish does not run"
unit=
for u in "$root"/lib/systemd/system/relish.service "$root"/usr/lib/systemd/system/relish.service; do
  [ -f "$u" ] && unit=$u
done
[ -n "$unit" ] || fail "no relish.service under (usr/)lib/systemd/system"
grep -q '^ExecStart=/usr/bin/relish serve --state /var/lib/relish' "$unit" || fail "the unit's ExecStart: $(grep ExecStart "$unit")"
grep -q '^ExecReload=' "$unit" || fail "the unit has no ExecReload"
grep -q '^g relish-admin' "$root/usr/lib/sysusers.d/relish.conf" || fail "sysusers.d/relish.conf missing"
grep -q '^d /var/lib/relish 0711' "$root/usr/lib/tmpfiles.d/relish.conf" || fail "tmpfiles.d/relish.conf missing"
grep -q 'postrotate\|/var/log/relish' "$root/etc/logrotate.d/relish" || fail "logrotate.d/relish missing"
doc=$root/usr/share/doc/relish
[ -f "$doc/serve.md" ] && [ -f "$doc/README.md" ] && [ -f "$doc/copyright" ] ||
  fail "docs: $(ls "$doc" | head -20 | tr '\n' ' ')"
grep -q 'Operating relish serve' "$doc/serve.md" || fail "serve.md is not the operator's guide"
for page in relish relish-run relish-serve relish-submit relish-runas; do
  [ -f "$root/usr/share/man/man1/$page.1.gz" ] || fail "no manual page $page(1) in the package"
done
zcat "$root/usr/share/man/man1/relish-serve.1.gz" | grep -q '^\.TH RELISH-SERVE "1"' ||
  fail "relish-serve(1) is not serve's page"
ex=$root/usr/share/relish/examples
[ -f "$ex/quickstart/quickstart.yaml" ] && [ -x "$ex/digits/train.py" ] || fail "examples missing"
"$root/usr/bin/relish" validate "$ex/quickstart/quickstart.yaml" >/dev/null || fail "the packaged quickstart does not validate"
py=$root/usr/lib/python3/dist-packages
[ -f "$py/relish_trial.py" ] && [ -f "$py/relish/client.py" ] || fail "the Python package is not in dist-packages"
(cd / && PYTHONPATH=$py python3 -c 'import relish, relish_trial; assert relish_trial is relish.trial') ||
  fail "the packaged Python package does not import"
[ -z "$(cd "$RELISH_SRC" && git status --porcelain --ignored=no debian 2>/dev/null | grep -v '^??' || true)" ] ||
  fail "the build changed the tree's debian/"
echo "test_deb: $(dpkg-deb -c "$deb" | wc -l) entries; binary, helper, unit, sysusers, tmpfiles, logrotate, docs, examples, Python package in place"
