#!/usr/bin/env bash
# Package test: build the .deb, check its metadata and contents, lint it,
# install it on this machine, run what it installed, then purge it and check
# that nothing is left in /usr. Usage: test_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
pkg=inference-workbench

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: installing a package needs root"
  exit 77
fi
fail() { echo "FAIL: $*" >&2; exit 1; }

# Start clean if an earlier run left the package installed.
dpkg -s $pkg >/dev/null 2>&1 && apt-get purge -y -qq $pkg >/dev/null

cmake --build "$build" --target package >/dev/null
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
deb="$build/${pkg}_${version}_amd64.deb"
[ -f "$deb" ] || fail "package $deb was not built"
echo "== $deb"

echo "== dpkg-deb --info"
info=$(dpkg-deb --info "$deb")
echo "$info"
grep -q "Depends:.*mesa-vulkan-drivers" <<<"$info" || fail "Depends lacks mesa-vulkan-drivers"
grep -q "Depends:.*libqt6sql6-sqlite" <<<"$info" || fail "Depends lacks libqt6sql6-sqlite"
grep -q "Depends:.*libvulkan1" <<<"$info" || fail "Depends lacks libvulkan1 (shlibdeps did not run?)"

echo "== dpkg-deb --contents"
contents=$(dpkg-deb --contents "$deb")
echo "$contents"
for path in ./usr/bin/workbench-cli ./usr/bin/workbench \
            ./usr/share/inference-workbench/models/stories260K.gguf \
            ./usr/share/applications/inference-workbench.desktop \
            ./usr/share/icons/hicolor/scalable/apps/inference-workbench.svg \
            ./usr/share/icons/hicolor/256x256/apps/inference-workbench.png \
            ./usr/share/man/man1/workbench-cli.1.gz \
            ./usr/share/doc/inference-workbench/copyright; do
  grep -q " $path\$" <<<"$contents" || fail "package lacks $path"
done

echo "== desktop-file-validate"
desktop-file-validate "$src/installer/inference-workbench.desktop"

echo "== lintian"
lint=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
echo "${lint:-no findings}"
if grep -q '^E:' <<<"$lint"; then fail "lintian reports errors"; fi

echo "== no build or source paths inside the binaries"
tmpx=$(mktemp -d)
dpkg-deb -x "$deb" "$tmpx"
for b in "$tmpx"/usr/bin/*; do
  if strings "$b" | grep -qF -e "$build" -e "$src"; then fail "$(basename "$b") embeds a build/source path"; fi
done
rm -rf "$tmpx"

echo "== apt-get install"
apt-get install -y -qq "$deb" >/dev/null
cd /tmp   # nowhere near the build tree
# A new user: an empty home folder, so the run log is created in its default
# place ($HOME/.local/share/inference-workbench) by the installed binary.
user_home=$(mktemp -d)
rc=0
out=$(HOME=$user_home XDG_DATA_HOME= /usr/bin/workbench-cli generate -p "Once upon a time" -n 16 \
      --temp 0 2>/tmp/workbench-cli-installed.err) || rc=$?
echo "generate (rc $rc): $out"
[ "$rc" -eq 0 ] || { cat /tmp/workbench-cli-installed.err; fail "installed workbench-cli generate failed (rc $rc)"; }
[ -n "$out" ] || fail "installed workbench-cli generated nothing"
rows=$(HOME=$user_home XDG_DATA_HOME= /usr/bin/workbench-cli export --format jsonl | wc -l)
[ "$rows" -eq 1 ] || fail "expected 1 logged response in the new user's run log, found $rows"
echo "run log: 1 response in $user_home/.local/share/inference-workbench/runlog.sqlite"

if [ -x /usr/bin/workbench ]; then
  rc=0
  HOME=$user_home XDG_DATA_HOME= timeout 8 xvfb-run -a /usr/bin/workbench \
    >/tmp/workbench-installed.log 2>&1 || rc=$?
  # 124: still running when the timeout stopped it, which is what we want.
  [ "$rc" -eq 124 ] || { cat /tmp/workbench-installed.log; fail "installed workbench exited early (rc $rc)"; }
  echo "workbench ran under Xvfb until stopped"
fi

rm -rf "$user_home"

echo "== apt-get purge"
apt-get purge -y -qq $pkg >/dev/null
left=$(find /usr -path '*inference-workbench*' -o -name 'workbench' -path '/usr/bin/*' -o -name 'workbench-cli*' 2>/dev/null || true)
[ -z "$left" ] || fail "files left after purge: $left"
echo "PASS: package builds, lints, installs, runs and purges cleanly"
