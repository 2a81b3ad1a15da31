#!/usr/bin/env bash
# `make deb`: builds build/deb/suggestd_<VERSION>_<arch>.deb with dpkg-deb, then runs
# lintian on it (any error or warning fails the build).
#
# The binary is built apart in build/deb/obj with Debian's hardening flags
# (dpkg-buildflags), installed with `make install PREFIX=/usr` into a staging tree, then
# stripped; man pages and docs are compressed as Debian policy asks. The maintainer
# scripts (dist/debian/) create the suggestd user and /var/lib/suggestd on configure and
# remove both on purge only.
set -euo pipefail
cd "$(dirname "$0")/.."
for t in dpkg-deb dpkg-shlibdeps dpkg-buildflags lintian; do
  command -v "$t" >/dev/null || { echo "deb: $t is missing (scripts/deps.sh installs it)" >&2; exit 1; }
done

VERSION=$(cat VERSION)
ARCH=$(dpkg --print-architecture)
OUT=build/deb
B=$OUT/obj
STAGE=$OUT/root
DEB=$OUT/suggestd_${VERSION}_${ARCH}.deb
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

rm -rf "$STAGE" "$DEB"
mkdir -p "$OUT"
export DEB_BUILD_MAINT_OPTIONS=${DEB_BUILD_MAINT_OPTIONS:-hardening=+all}
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
make --no-print-directory -j"${DEB_JOBS:-2}" B="$B" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS" \
  install DESTDIR="$PWD/$STAGE" PREFIX=/usr UNITDIR=/lib/systemd/system \
  >/dev/null

doc=$STAGE/usr/share/doc/suggestd
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$STAGE/usr/bin/suggestd"
gzip -9n "$STAGE"/usr/share/man/man1/*.1
# Policy: files in /usr/share/doc larger than 4 kB are compressed.
find "$doc" -type f -size +4k -exec gzip -9n {} +
install -m 0644 dist/debian/copyright "$doc/copyright"
when=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
printf 'suggestd (%s) unstable; urgency=medium\n\n  * Built from the suggestd source tree (git %s).\n\n -- suggestd maintainers <maintainers@suggestd.example.org>  %s\n' \
  "$VERSION" "$(git describe --always 2>/dev/null || echo unknown)" "$when" | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"

# Shared-library dependencies of the binary, as Debian names them.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: suggestd\n\nPackage: suggestd\nArchitecture: any\n' > "$tmp/debian/control"
bin=$PWD/$STAGE/usr/bin/suggestd
shlibs=$(cd "$tmp" && dpkg-shlibdeps -O "$bin" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

mkdir -p "$STAGE/DEBIAN"
size=$(du -k -s --exclude=DEBIAN "$STAGE" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@SIZE@|$size|" -e "s|@SHLIBS@|$shlibs|" \
  dist/debian/control.in > "$STAGE/DEBIAN/control"
install -m 0644 dist/debian/conffiles "$STAGE/DEBIAN/conffiles"
for s in postinst prerm postrm; do install -m 0755 "dist/debian/$s" "$STAGE/DEBIAN/$s"; done
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort |
  xargs md5sum) > "$STAGE/DEBIAN/md5sums"
chmod 0644 "$STAGE/DEBIAN/md5sums"
# Directories 0755 whatever the umask; files were installed with explicit modes.
find "$STAGE" -type d -exec chmod 0755 {} +

dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$DEB" >/dev/null
echo "deb: $DEB"
lintian --fail-on error,warning --tag-display-limit 0 "$DEB"
echo "deb: lintian clean"
