#!/bin/sh
# SPDX-License-Identifier: MIT
# The Debian packages of `make deb` (docs/packaging.md, issue #30): built
# from the tree into the test's folder, lintian clean, each package holding
# what it should, the agent's packages free of cairo and X11, and pmon run
# from the unpacked packages. Where root, debootstrap and a Debian 12
# mirror are there (PMON_DEB_MIRROR, default deb.debian.org), the packages
# are also installed with apt into a clean bookworm root made by
# debootstrap, and run there; otherwise that part says why it is skipped.
# PMON_DEB_DIR=DIR takes the .debs of an earlier `make deb` instead of
# building them again.
. "$(dirname "$0")/lib.sh"
: "${PMON_SRC:?set PMON_SRC}"

skip() { echo "1..0 # SKIP $*"; exit 77; }
# Building the packages takes minutes (the whole tree again, one job) and
# the clean root downloads Debian: `make test-deb` runs this test with the
# packages `make deb` built (PMON_DEB_DIR) and the clean root asked for
# (PMON_DEB_CLEAN_ROOT=1); `make test` skips it unless PMON_TEST_DEB=1.
if [ -z "${PMON_DEB_DIR:-}" ] && [ "${PMON_TEST_DEB:-0}" != 1 ]; then
	skip "building the Debian packages takes minutes: make test-deb runs this test (docs/packaging.md)"
fi
for t in dpkg-buildpackage dpkg-deb dh; do
	command -v $t >/dev/null 2>&1 || skip "$t is not installed (Debian packages dpkg-dev, debhelper)"
done
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
V=$(dpkg-parsechangelog -l "$PMON_SRC/debian/changelog" -S Version)

# ---- build -----------------------------------------------------------------
if [ -n "${PMON_DEB_DIR:-}" ]; then
	D=$PMON_DEB_DIR
else
	(cd "$PMON_SRC" && dpkg-checkbuilddeps) >"$TMP/bdeps" 2>&1 ||
		skip "build dependencies missing: $(sed -n 's/.*Unmet build dependencies: //p' "$TMP/bdeps")"
	D=$TMP/deb
	make -s -C "$PMON_SRC" deb DEB_OUT="$D" DEB_JOBS=1 LINTIAN=0 >"$TMP/make.log" 2>&1
	rc=$?
	check "make deb succeeds" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || { tail -30 "$TMP/make.log"; finish; exit 1; }
	check "make deb leaves no build folder in the tree" sh -c "[ ! -e '$PMON_SRC/obj-$MA' ] && [ ! -e '$PMON_SRC/debian/tmp' ]"
fi
deb() { echo "$D/${1}_${V}_amd64.deb"; }
for p in pmon pmon-ui pmon-serve libpmon0 libpmon-report0 libpmon-plot0 libpmon-dev; do
	check "$p package built" [ -s "$(deb $p)" ]
done
check "the .changes is beside them" [ -s "$D/pmon_${V}_amd64.changes" ]
if command -v lintian >/dev/null 2>&1; then
	lintian --display-info --fail-on error,warning "$D/pmon_${V}_amd64.changes" >"$TMP/lintian" 2>&1
	check "lintian: no error or warning ($(grep -c '^[EW]:' "$TMP/lintian") tags)" [ $? -eq 0 ]
	# Every informational tag left is explained in docs/packaging.md.
	for tag in $(sed -n 's/^[IP]: [^ ]* [^ ]*: \([a-z0-9-]*\).*/\1/p' "$TMP/lintian" | sort -u); do
		check "lintian tag $tag explained in docs/packaging.md" grep -q "$tag" "$PMON_SRC/docs/packaging.md"
	done
else
	echo "# lintian is not installed: its check is skipped"
fi

# ---- contents ----------------------------------------------------------------
has() { # PACKAGE PATH...: each path is in the package
	p=$1; shift
	dpkg-deb -c "$(deb "$p")" | awk '{print $6}' | sed 's,^\./,/,' >"$TMP/list.$p"
	for f in "$@"; do check "$p holds $f" grep -qx "$f" "$TMP/list.$p"; done
}
has pmon /usr/bin/pmon /usr/lib/$MA/pmon/pmon-ui-report.so /usr/lib/$MA/pmon/pmon-ui-annotate.so \
	/usr/share/man/man1/pmon.1.gz /usr/share/man/man1/pmon-stat.1.gz /usr/share/man/man5/pmon-data-format.5.gz \
	/usr/share/bash-completion/completions/pmon /usr/share/zsh/vendor-completions/_pmon
check "pmon holds neither pmon-ui.so nor pmon-serve.so" sh -c "! grep -E 'pmon-(ui|serve)\.so' '$TMP/list.pmon'"
has pmon-ui /usr/lib/$MA/pmon/pmon-ui.so
has pmon-serve /usr/lib/$MA/pmon/pmon-serve.so /lib/systemd/system/pmon-serve.service /etc/default/pmon-serve \
	/usr/share/doc/pmon-serve/prometheus-pmon.yml /usr/share/doc/pmon-serve/serve-grafana.json \
	/usr/share/doc/pmon-serve/pmon-serve-daemonset.yaml
has libpmon0 /usr/lib/$MA/libpmon.so.0
check "libpmon0 holds libpmon only" sh -c "! grep -E 'libpmon-(report|plot)' '$TMP/list.libpmon0'"
has libpmon-report0 /usr/lib/$MA/libpmon-report.so.0
has libpmon-plot0 /usr/lib/$MA/libpmon-plot.so.0
has libpmon-dev /usr/include/pmon/pmon.h /usr/lib/$MA/libpmon.so /usr/lib/$MA/libpmon.a \
	/usr/lib/$MA/libpmon-report.a /usr/lib/$MA/libpmon-plot.a /usr/lib/$MA/pkgconfig/libpmon.pc \
	/usr/share/man/man3/libpmon.3.gz

# ---- dependencies: the agent without cairo and X11 ---------------------------
dep() { dpkg-deb -f "$(deb "$1")" Depends; }
check "pmon depends on libpmon0" sh -c "dpkg-deb -f '$(deb pmon)' Depends | grep -q 'libpmon0'"
for p in pmon pmon-serve libpmon0 libpmon-report0; do
	check "$p does not depend on cairo, X11 or ncurses" sh -c "! dpkg-deb -f '$(deb $p)' Depends | grep -Eq 'libcairo|libx11|libxcb|ncurses|pmon-ui|libpmon-plot'"
done
check "pmon-serve depends on libmicrohttpd and pmon" sh -c "dpkg-deb -f '$(deb pmon-serve)' Depends | grep -q libmicrohttpd &&
	dpkg-deb -f '$(deb pmon-serve)' Depends | grep -q 'pmon (= $V)'"
check "pmon-ui depends on libpmon-plot0" sh -c "dpkg-deb -f '$(deb pmon-ui)' Depends | grep -q libpmon-plot0"
check "libpmon-report0 wants libpmon0 of its own build" sh -c "dpkg-deb -f '$(deb libpmon-report0)' Depends | grep -q 'libpmon0 (= $V)'"
# The same, through the Debian packages they name, where apt knows them.
ext=$( (dep pmon; dep pmon-serve; dep libpmon0; dep libpmon-report0) | tr ',' '\n' |
	sed 's/[ (].*//; s/^ *//' | grep -v '^libpmon\|^pmon$' | sort -u)
if apt-cache show libc6 >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $ext 2>/dev/null | grep -v '^ ' >"$TMP/closure"
	check "the agent's libraries pull in no cairo or X11 ($(wc -l <"$TMP/closure") packages)" \
		sh -c "[ -s '$TMP/closure' ] && ! grep -Eq '^(libcairo|libx11|libxcb|libxrender)' '$TMP/closure'"
else
	echo "# apt has no package lists: the recursive dependency check is skipped"
fi

# ---- unpacked and run ----------------------------------------------------------
R=$TMP/root
for p in pmon pmon-serve libpmon0 libpmon-report0 libpmon-dev; do dpkg-deb -x "$(deb "$p")" "$R"; done
L=$R/usr/lib/$MA
LD_LIBRARY_PATH=$L "$R/usr/bin/pmon" info >"$TMP/info" 2>&1
check "unpacked pmon info runs" [ $? -eq 0 ]
check "unpacked pmon is the packaged libpmon's" sh -c "LD_LIBRARY_PATH='$L' ldd '$R/usr/bin/pmon' | grep -q '$L/libpmon.so.0'"
LD_LIBRARY_PATH=$L "$R/usr/bin/pmon" stat -e task-clock -- true >"$TMP/stat" 2>&1
check "unpacked pmon stat -- true runs" [ $? -eq 0 ]
LD_LIBRARY_PATH=$L "$R/usr/bin/pmon" serve --help >"$TMP/serve" 2>&1
check "pmon finds pmon-serve.so beside it" grep -qi usage "$TMP/serve"
LD_LIBRARY_PATH=$L "$R/usr/bin/pmon" plot --help >"$TMP/plot" 2>&1
check "without pmon-ui, plot says its module is not installed" grep -q 'pmon-ui.so is not installed' "$TMP/plot"
cc_=$(command -v cc || true)
if [ -n "$cc_" ]; then
	PKG_CONFIG_PATH=$L/pkgconfig pkg-config --cflags --libs libpmon >"$TMP/pc" 2>&1
	check "libpmon.pc of libpmon-dev points into the root" grep -q "$R" "$TMP/pc"
	# shellcheck disable=SC2046
	cc -Wall -Werror "$PMON_SRC/examples/regions.c" $(cat "$TMP/pc") -o "$TMP/regions" 2>"$TMP/cc.err"
	check "a program builds against libpmon-dev" [ $? -eq 0 ]
	LD_LIBRARY_PATH=$L "$TMP/regions" >"$TMP/regions.out" 2>&1
	check "and runs" [ $? -eq 0 ]
fi

# ---- a clean Debian 12 root (debootstrap) ------------------------------------
MIRROR=${PMON_DEB_MIRROR:-http://deb.debian.org/debian}
why=
if [ "${PMON_DEB_CLEAN_ROOT:-0}" != 1 ]; then why="PMON_DEB_CLEAN_ROOT=1 asks for it (it downloads Debian)"
elif [ "$(id -u)" != 0 ]; then why="not root"
elif ! command -v debootstrap >/dev/null 2>&1; then why="debootstrap is not installed"
elif ! command -v unshare >/dev/null 2>&1; then why="unshare is not installed"
elif ! python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10)' \
	"$MIRROR/dists/bookworm/Release" >/dev/null 2>&1; then why="the Debian 12 mirror $MIRROR is not reachable"
fi
if [ -n "$why" ]; then
	echo "# SKIP install in a clean Debian 12 root: $why"
else
	C=$TMP/bookworm
	debootstrap --variant=minbase bookworm "$C" "$MIRROR" >"$TMP/debootstrap.log" 2>&1
	check "debootstrap made a Debian 12 root" [ $? -eq 0 ]
	mkdir -p "$C/tmp/debs" && cp "$(deb pmon)" "$(deb pmon-serve)" "$(deb libpmon0)" "$(deb libpmon-report0)" \
		"$(deb libpmon-plot0)" "$(deb libpmon-dev)" "$C/tmp/debs/" && cp "$PMON_SRC/examples/regions.c" "$C/tmp/"
	# A private mount namespace: /proc and /sys of the root go with it.
	inroot() {
		unshare -m sh -c 'mount -t proc proc "$0/proc" && mount --rbind /sys "$0/sys" &&
			mount --rbind /dev "$0/dev" && exec chroot "$0" /bin/sh -c "$1"' "$C" "$1"
	}
	inroot 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		/tmp/debs/pmon_*.deb /tmp/debs/pmon-serve_*.deb /tmp/debs/libpmon0_*.deb /tmp/debs/libpmon-report0_*.deb' \
		>"$TMP/apt.log" 2>&1
	rc=$?
	check "apt installs pmon and pmon-serve in the clean root" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/apt.log" | tail -15
	inroot 'dpkg-query -W libcairo2' >/dev/null 2>&1
	check "the agent's install brought no cairo" [ $? -ne 0 ]
	inroot 'pmon info' >"$TMP/c.info" 2>&1
	check "pmon info runs in the clean root" [ $? -eq 0 ]
	inroot 'pmon stat -e task-clock -- true' >"$TMP/c.stat" 2>&1
	check "pmon stat -- true runs in the clean root" [ $? -eq 0 ]
	inroot 'test -f /lib/systemd/system/pmon-serve.service && pmon serve --help' >"$TMP/c.serve" 2>&1
	check "the unit is installed and pmon serve is there" grep -qi usage "$TMP/c.serve"
	inroot 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev pkgconf \
		/tmp/debs/libpmon-dev_*.deb /tmp/debs/libpmon-plot0_*.deb >/dev/null && \
		cc -Wall -Werror /tmp/regions.c $(pkg-config --cflags --libs libpmon) -o /tmp/regions && /tmp/regions' \
		>"$TMP/c.regions" 2>&1
	check "a program built against libpmon-dev runs in the clean root" [ $? -eq 0 ]
fi
finish
