# shellcheck shell=bash
# shellcheck disable=SC2034 # settings read by the scripts that source this
#
# Shared set-up for scripts/run, scripts/test and scripts/build-images:
# Debian packages, a running dockerd, build and install, the local images
# and the persistent environment file.  Sourced, never run.  Every step
# checks first and does nothing when its work is already done, so the
# scripts are safe to re-run.

set -euo pipefail

AS_REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AS_PREFIX=/usr/local
# Debian's python3 for the tests, whatever else is first on PATH: the
# test modules it needs (python3-websockets) come as Debian packages.
AS_CONFIGURE_ARGS=(--prefix="$AS_PREFIX" --enable-werror PYTHON3=/usr/bin/python3)

AS_ENV_DIR=/etc/agent-sandbox
AS_ENV_FILE=$AS_ENV_DIR/agent-sandbox.env
AS_DATA_DIR_DEFAULT=/var/lib/agent-sandbox
AS_CHROOT_DIR_DEFAULT=/var/empty
AS_UNIT_FILE=/etc/systemd/system/agent-sandbox.service
AS_DOCKERD_LOG=/var/log/agent-sandbox-dockerd.log

# The reference server's default image, and what we build when no registry
# can be reached.
AS_REFERENCE_IMAGE=python:3.12-slim
AS_PY_IMAGE=agent-sandbox/debian-python:bookworm
AS_BUSYBOX_IMAGE=agent-sandbox/busybox:test
AS_DEBIAN_SUITE=bookworm
AS_DEBIAN_MIRROR_DEFAULT=http://deb.debian.org/debian
AS_IMAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

AS_PACKAGES=(
	build-essential autoconf automake libtool pkg-config
	libevent-dev libjson-c-dev libarchive-dev libbsd-dev libseccomp-dev
	libcmocka-dev libhttp-parser-dev libwslay-dev libmd-dev python3 curl docker.io debootstrap busybox-static
	ca-certificates
	# The libFuzzer harnesses (tests/fuzz/): clang, its fuzzer and
	# sanitizer runtimes, and llvm-symbolizer for readable reports.
	clang-14 libclang-rt-14-dev llvm-14
	# tests/unit/memcheck.sh: the unit tests under memcheck.
	valgrind
	# tests/etc/unit-security.sh: systemd-analyze scores the unit.
	systemd
	# scripts/test runs sandboxes under gVisor too.
	runsc
	# tests/integration/private_docker.py: a bridge for a dockerd of its own.
	iproute2
	# tests/integration/test_process_attach.py: a real WebSocket client.
	python3-websockets
	# tests/integration/test_socket_proxy.py and scripts/test's socket
	# proxy pass: Docker behind etc/haproxy-socket-proxy.cfg.
	haproxy
	# tests/integration/test_proxy_tar_end.py: strace holds the proxy's poll(2)
	# to open a race window.
	strace
)

# --- messages ----------------------------------------------------------------

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf '==> WARNING: %s\n' "$*" >&2; }
die() {
	printf '==> ERROR: %s\n' "$*" >&2
	exit 1
}

# Seconds since $1 (a value of $SECONDS), as "12 s" / "3 min 4 s".
as_elapsed() {
	local s=$((SECONDS - $1))
	if [ "$s" -ge 60 ]; then
		printf '%d min %d s' $((s / 60)) $((s % 60))
	else
		printf '%d s' "$s"
	fi
}

as_require_root() {
	[ "$(id -u)" -eq 0 ] || die "run this as root (it installs packages, starts dockerd and installs to $AS_PREFIX)"
}

# True when systemd is PID 1, i.e. systemctl can start and stop units.
as_have_systemd() {
	[ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]
}

# --- Debian packages -----------------------------------------------------------

as_pkg_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# Install whatever of AS_PACKAGES is missing; run
# apt-get update first, and only when something is missing.
as_install_packages() {
	local missing=() p policy_added=0 rc=0

	for p in "${AS_PACKAGES[@]}"; do
		as_pkg_installed "$p" || missing+=("$p")
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		log "Debian packages: all ${#AS_PACKAGES[@]} present"
		return 0
	fi
	command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them by hand"
	log "installing Debian packages: ${missing[*]}"
	# Without systemd, stop the packages' maintainer scripts from starting
	# services (docker.io's would start dockerd behind our back, or fail
	# the install); as_start_dockerd starts it the way we want.
	if ! as_have_systemd && [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\n# added by agent-sandbox scripts/common.sh during apt-get install\nexit 101\n' \
		    >/usr/sbin/policy-rc.d
		chmod 0755 /usr/sbin/policy-rc.d
		policy_added=1
	fi
	export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=a
	{
		apt-get update -q &&
			apt-get install -y -q --no-install-recommends "${missing[@]}"
	} </dev/null || rc=$?
	[ "$policy_added" -eq 0 ] || rm -f /usr/sbin/policy-rc.d
	[ "$rc" -eq 0 ] || die "apt-get failed (exit $rc) installing: ${missing[*]}"
	hash -r
}

# --- dockerd -------------------------------------------------------------------

as_docker_ping() {
	timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# Make sure a Docker engine answers: reuse a running one, else start it with
# systemctl (when systemd runs) or in the background with nohup.
as_start_dockerd() {
	local i pid

	if as_docker_ping; then
		log "dockerd is running (engine $(docker version --format '{{.Server.Version}}' 2>/dev/null))"
		return 0
	fi
	case "${DOCKER_HOST:-unix:///var/run/docker.sock}" in
	unix:///var/run/docker.sock | unix:///run/docker.sock) ;;
	*) die "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine, or unset DOCKER_HOST to use a local dockerd" ;;
	esac

	if as_have_systemd; then
		log "starting Docker with systemctl start docker"
		systemctl start docker || warn "systemctl start docker failed; trying dockerd directly"
	fi
	if ! as_docker_ping && ! pgrep -x dockerd >/dev/null; then
		command -v dockerd >/dev/null || die "dockerd not found (apt-get install docker.io)"
		log "starting dockerd in the background (log: $AS_DOCKERD_LOG)"
		# Own session, so a Ctrl-C on scripts/run does not stop it.
		setsid nohup dockerd >>"$AS_DOCKERD_LOG" 2>&1 </dev/null &
		pid=$!
		disown "$pid" 2>/dev/null || true
	fi
	for i in $(seq 1 60); do
		if as_docker_ping; then
			log "dockerd answers after ${i} s"
			return 0
		fi
		if [ -n "${pid:-}" ] && ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 1
	done
	if [ -z "${pid:-}" ]; then
		die "a dockerd process runs but does not answer on /var/run/docker.sock: stop it (or fix it) and re-run"
	fi
	warn "dockerd did not answer within 60 s; last lines of $AS_DOCKERD_LOG:"
	tail -n 30 "$AS_DOCKERD_LOG" >&2 2>/dev/null || true
	die "no Docker engine: see $AS_DOCKERD_LOG"
}

# gVisor for the tests that run sandboxes under it (scripts/test): runsc
# registered with dockerd as "runsc" without any network, as
# docs/configuration.md says; whatever else daemon.json holds is kept.
as_register_runsc() {
	local conf=/etc/docker/daemon.json runsc i

	runsc=$(command -v runsc) || die "runsc not found (apt-get install runsc)"
	if as_docker_has_runtime runsc; then
		log "dockerd has the runsc runtime"
		return 0
	fi
	python3 - "$conf" "$runsc" <<'PY' || die "cannot add runsc to $conf"
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
conf = {}
if os.path.exists(path) and os.path.getsize(path) > 0:
    with open(path) as f:
        conf = json.load(f)
conf.setdefault("runtimes", {})["runsc"] = {
    "path": runsc, "runtimeArgs": ["--network=none"]}
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path + ".new", "w") as f:
    json.dump(conf, f, indent=2)
    f.write("\n")
os.rename(path + ".new", path)
PY
	# dockerd reloads its runtimes on SIGHUP.
	log "registered runsc in $conf; reloading dockerd"
	pkill -HUP -x dockerd || die "no dockerd process to reload"
	for i in $(seq 1 20); do
		as_docker_has_runtime runsc && return 0
		sleep 1
	done
	die "dockerd did not take the runsc runtime from $conf"
}

# The unit tests once more in a build with ASan and UBSan: a copy of the
# tracked files as they are in the work tree, configured with
# --enable-sanitizers, in AGENT_SANDBOX_SAN_DIR (default below).
# LeakSanitizer is off (its check at exit runs a ptrace tracer, which the
# seccomp filters kill; memcheck looks for leaks, tests/unit/memcheck.sh),
# and so is ASan's SIGSEGV handler, so that a job a test makes crash dies
# of SIGSEGV as it would without ASan.
AS_SAN_DIR=${AGENT_SANDBOX_SAN_DIR:-/tmp/agent-sandbox-sanitizers}
as_sanitizer_build() {
	rm -rf "$AS_SAN_DIR" && mkdir -p "$AS_SAN_DIR" || return 1
	(cd "$AS_REPO_ROOT" && git ls-files -z | tar --null -T - -cf -) |
		tar -C "$AS_SAN_DIR" -xf - || return 1
	(
		cd "$AS_SAN_DIR" &&
			./autogen.sh >build.log 2>&1 &&
			./configure --enable-sanitizers --enable-werror \
			    PYTHON3=/usr/bin/python3 >>build.log 2>&1 &&
			make -j"$(nproc)" >>build.log 2>&1
	)
}

as_sanitizer_unit_tests() {
	as_sanitizer_build || return 1
	(
		cd "$AS_SAN_DIR" &&
			ASAN_OPTIONS=detect_leaks=0:handle_segv=0 \
				UBSAN_OPTIONS=print_stacktrace=1 \
				make check-unit >check.log 2>&1
	)
}

# One integration test (tests/integration/<test>.py) against the daemons
# of that build, not the installed ones; its output goes beside it in
# that copy, as <test>.log, and its exit status is the test's (77: skip).
# A sanitizer report in a server's log fails it (harness.py), and
# AGENT_SANDBOX_TEST_SANITIZERS=1 leaves out the few checks that cannot
# hold under ASan, each with a comment saying why.
as_sanitizer_integration_test() {
	(
		cd "$AS_SAN_DIR" &&
			env -u AGENT_SANDBOX_TEST_PREFIX \
				AGENT_SANDBOX_BUILDDIR="$AS_SAN_DIR" \
				AGENT_SANDBOX_SRCDIR="$AS_SAN_DIR" \
				AGENT_SANDBOX_TEST_SANITIZERS=1 \
				/usr/bin/python3 "$1" >"${1%.py}.log" 2>&1 </dev/null
	)
}

as_docker_has_runtime() {
	timeout 10 docker info --format '{{json .Runtimes}}' 2>/dev/null |
		grep -q "\"$1\""
}

as_image_exists() {
	docker image inspect "$1" >/dev/null 2>&1
}

as_image_size() {
	docker image inspect --format '{{.Size}}' "$1" 2>/dev/null |
		awk '{ printf "%.1f MB", $1 / 1000000 }'
}

# --- build and install ---------------------------------------------------------

# ./autogen.sh when configure is missing or older than its inputs;
# ./configure when never run, older than configure, or run with other
# arguments; then make and make install.
as_build_install() {
	local want have start=$SECONDS

	# Each step is checked explicitly so that this also stops at the first
	# failure when called from an "if" (where set -e does not apply).
	cd "$AS_REPO_ROOT" || return 1
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
		log "running ./autogen.sh"
		./autogen.sh || return 1
	fi
	# config.status --config quotes arguments only on some autoconf versions.
	want="${AS_CONFIGURE_ARGS[*]}"
	have=$( { [ -x config.status ] && ./config.status --config | tr -d "'"; } 2>/dev/null || true)
	if [ ! -f Makefile ] || [ configure -nt config.status ] || [ "$have" != "$want" ]; then
		log "running ./configure ${AS_CONFIGURE_ARGS[*]}"
		./configure "${AS_CONFIGURE_ARGS[@]}" || return 1
	fi
	log "running make -j$(nproc)"
	make -j"$(nproc)" || return 1
	log "running make install"
	make install || return 1
	log "built and installed to $AS_PREFIX in $(as_elapsed "$start")"
}

# Directories the daemons expect: apid's and the archive worker's (and the
# proxy's) empty chroot, owned by root and writable by nobody else.
as_prepare_dirs() {
	local chroot_dir=${AGENT_SANDBOX_CHROOT_DIR:-$AS_CHROOT_DIR_DEFAULT}

	if [ ! -d "$chroot_dir" ]; then
		log "creating the empty privsep chroot $chroot_dir"
		install -d -m 0755 -o root -g root "$chroot_dir"
	fi
	as_ensure_managerd_user
}

# managerd's own unprivileged user (AGENT_SANDBOX_MANAGERD_USER's
# default): it owns the data directory once managerd has started.
as_ensure_managerd_user() {
	local user=${AGENT_SANDBOX_MANAGERD_USER:-agent-sandbox}

	getent passwd "$user" >/dev/null && return 0
	log "creating the system user $user for managerd"
	useradd --system --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --user-group "$user" ||
		die "cannot create the user $user"
}

# --- images --------------------------------------------------------------------

# Unmount anything left mounted below a rootfs (debootstrap mounts /proc
# and /sys in it), then delete it without crossing into other filesystems.
as_rootfs_cleanup() {
	local dir=$1

	[ -n "$dir" ] && [ -d "$dir" ] || return 0
	awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts |
		sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
	rm -rf --one-file-system "$dir"
}

# The URI apt uses on this machine for Debian $1 (default bookworm), from
# one-line .list files and deb822 .sources files, or $AS_DEBIAN_MIRROR_DEFAULT.
# AGENT_SANDBOX_DEBIAN_MIRROR overrides it.
as_debian_mirror() {
	local suite=${1:-$AS_DEBIAN_SUITE} files=() f uri=""

	if [ -n "${AGENT_SANDBOX_DEBIAN_MIRROR:-}" ]; then
		printf '%s\n' "$AGENT_SANDBOX_DEBIAN_MIRROR"
		return 0
	fi
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ "${#files[@]}" -gt 0 ]; then
		uri=$(awk -v suite="$suite" '
		function ok(u) { return u ~ /^(https?|ftp|file):\/\// }
		function flush() {
			if (!found && types ~ /(^|[ \t])deb([ \t]|$)/ && enabled !~ /^[ \t]*no/ &&
			    (" " suites " ") ~ ("[ \t]" suite "[ \t]")) {
				n = split(uris, u, /[ \t]+/)
				for (i = 1; i <= n; i++)
					if (ok(u[i])) { print u[i]; found = 1; break }
			}
			types = uris = suites = enabled = ""
		}
		FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/) }
		/^[ \t]*#/ { next }
		deb822 {
			if ($0 ~ /^[ \t]*$/) { flush(); next }
			line = $0; key = tolower(line); sub(/:.*/, "", key)
			val = line; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "enabled") enabled = tolower(val)
			next
		}
		$1 == "deb" {
			line = $0; gsub(/\[[^]]*\]/, "", line)
			split(line, w, /[ \t]+/)
			if (!found && w[3] == suite && ok(w[2])) { print w[2]; found = 1 }
		}
		END { if (deb822) flush() }
		' "${files[@]}" | head -n 1)
	fi
	printf '%s\n' "${uri:-$AS_DEBIAN_MIRROR_DEFAULT}"
}

# agent-sandbox/busybox:test: static busybox, a link per applet, root and
# a user 1000, /tmp and /workspace.  A few MB; used by the integration tests.
as_build_busybox_image() (
	local image=$AS_BUSYBOX_IMAGE bb=/bin/busybox dir applet start=$SECONDS

	if as_image_exists "$image"; then
		log "image $image present ($(as_image_size "$image"))"
		return 0
	fi
	[ -x "$bb" ] || die "$bb not found (apt-get install busybox-static)"
	if ldd "$bb" >/dev/null 2>&1; then
		die "$bb is dynamically linked: apt-get install busybox-static"
	fi
	log "building image $image from $bb"
	dir=$(mktemp -d /var/tmp/agent-sandbox-busybox.XXXXXX)
	# shellcheck disable=SC2064 # expand $dir now
	trap "as_rootfs_cleanup '$dir'" EXIT
	install -d -m 0755 "$dir"/bin "$dir"/sbin "$dir"/usr/bin "$dir"/usr/sbin \
		"$dir"/etc "$dir"/root "$dir"/workspace "$dir"/proc "$dir"/sys "$dir"/dev
	install -d -m 1777 "$dir"/tmp
	install -m 0755 "$bb" "$dir"/bin/busybox
	"$bb" --list-full | while read -r applet; do
		case "$applet" in '' | linuxrc) continue ;; esac
		[ ! -e "$dir/$applet" ] || continue
		[ -d "$dir/${applet%/*}" ] || mkdir -p "$dir/${applet%/*}"
		ln -s /bin/busybox "$dir/$applet"
	done
	# Every applet also under /bin, for images that look only there.
	"$bb" --list | while read -r applet; do
		[ -e "$dir/bin/$applet" ] || ln -s /bin/busybox "$dir/bin/$applet"
	done
	[ -e "$dir"/bin/sh ] || ln -s /bin/busybox "$dir"/bin/sh
	cat >"$dir"/etc/passwd <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:user:/workspace:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$dir"/etc/group <<-'EOF'
		root:x:0:
		user:x:1000:
		nogroup:x:65534:
	EOF
	tar --numeric-owner --owner=0 --group=0 -C "$dir" -c . |
		docker import \
			--change 'CMD ["/bin/sh"]' \
			--change "ENV PATH=$AS_IMAGE_PATH" \
			--message "agent-sandbox test image: static busybox" \
			- "$image" >/dev/null
	log "built $image in $(as_elapsed "$start") ($(as_image_size "$image"))"
)

# agent-sandbox/debian-python:bookworm: debootstrap minbase with python3
# from the mirror apt uses here; imported with docker import.  Takes a few
# minutes; skipped when the image exists.
as_build_python_image() (
	local image=$AS_PY_IMAGE dir mirror logf start=$SECONDS

	if as_image_exists "$image"; then
		log "image $image present ($(as_image_size "$image"))"
		return 0
	fi
	command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
	mirror=$(as_debian_mirror "$AS_DEBIAN_SUITE")
	log "building image $image: debootstrap --variant=minbase --include=python3 $AS_DEBIAN_SUITE from $mirror (a few minutes)"
	dir=$(mktemp -d /var/tmp/agent-sandbox-rootfs.XXXXXX)
	logf=$(mktemp /var/tmp/agent-sandbox-debootstrap.XXXXXX.log)
	# shellcheck disable=SC2064 # expand $dir and $logf now
	trap "as_rootfs_cleanup '$dir'; rm -f '$logf'" EXIT
	if ! debootstrap --variant=minbase --include=python3 \
		"$AS_DEBIAN_SUITE" "$dir" "$mirror" >"$logf" 2>&1; then
		warn "debootstrap failed; last lines of its output:"
		tail -n 40 "$logf" >&2
		[ ! -f "$dir"/debootstrap/debootstrap.log ] ||
			tail -n 40 "$dir"/debootstrap/debootstrap.log >&2
		die "could not build $image"
	fi
	log "debootstrap done in $(as_elapsed "$start"); importing"
	# Trim what a container never needs, as Debian's slim images do; keep
	# the copyright files.
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin \
		"$dir"/var/lib/apt/lists/* "$dir"/var/log/* \
		"$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/usr/share/locale/*
	find "$dir"/usr/share/doc -type f ! -name copyright -delete 2>/dev/null || true
	install -d -m 0755 "$dir"/workspace
	: >"$dir"/etc/hostname
	tar --numeric-owner -C "$dir" -c . |
		docker import \
			--change 'CMD ["/bin/sh"]' \
			--change "ENV PATH=$AS_IMAGE_PATH" \
			--change 'ENV LANG=C.UTF-8' \
			--message "agent-sandbox: Debian $AS_DEBIAN_SUITE minbase with python3 (debootstrap)" \
			- "$image" >/dev/null
	log "built $image in $(as_elapsed "$start") ($(as_image_size "$image"))"
)

# Settle AGENT_SANDBOX_DEFAULT_IMAGE: keep it when present or pullable;
# when it is the reference default (or our own local image) and no
# registry answers, build the local Debian image and use that.
as_ensure_default_image() {
	local img=${AGENT_SANDBOX_DEFAULT_IMAGE:-$AS_REFERENCE_IMAGE}

	if as_image_exists "$img"; then
		log "default image $img present"
	elif [ "$img" != "$AS_PY_IMAGE" ] && log "pulling default image $img" &&
		timeout 60 docker pull -q "$img" >/dev/null 2>&1; then
		log "pulled $img"
	elif [ "$img" = "$AS_REFERENCE_IMAGE" ] || [ "$img" = "$AS_PY_IMAGE" ]; then
		[ "$img" = "$AS_PY_IMAGE" ] || log "cannot pull $img (no registry reachable?)"
		as_build_python_image
		img=$AS_PY_IMAGE
		log "USING LOCAL IMAGE $img as AGENT_SANDBOX_DEFAULT_IMAGE (built from Debian packages)"
	else
		warn "default image $img is not present and cannot be pulled; creating a sandbox without an explicit image will fail until it is"
	fi
	export AGENT_SANDBOX_DEFAULT_IMAGE=$img
}

# --- the environment file --------------------------------------------------------

# Export each KEY=value of $AS_ENV_FILE that the environment does not set
# already (the environment wins).  The file is parsed, never sourced.
as_env_load() {
	local line key val

	[ -f "$AS_ENV_FILE" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line#"${line%%[![:space:]]*}"}
		case "$line" in '' | '#'*) continue ;; esac
		[[ "$line" == *=* ]] || continue
		key=${line%%=*}
		val=${line#*=}
		[[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
		if [[ "$val" =~ ^\"(.*)\"$ ]] || [[ "$val" =~ ^\'(.*)\'$ ]]; then
			val=${BASH_REMATCH[1]}
		fi
		[ -n "${!key+set}" ] || export "$key=$val"
	done <"$AS_ENV_FILE"
}

# True when the file has a KEY= line.
as_env_has() {
	[ -f "$AS_ENV_FILE" ] && grep -q "^[[:space:]]*$1=" "$AS_ENV_FILE"
}

# Set KEY=value in the file (replacing a KEY= line), mode 0600.
as_env_set() {
	local key=$1 val=$2 tmp

	install -d -m 0755 "$AS_ENV_DIR"
	tmp=$(umask 077 && mktemp "$AS_ENV_FILE.XXXXXX")
	if [ -f "$AS_ENV_FILE" ]; then
		grep -v "^[[:space:]]*$key=" "$AS_ENV_FILE" >"$tmp" || true
	else
		printf '# agent-sandbox server settings (KEY=value, read by scripts/run and\n# the systemd unit). All settings: etc/agent-sandbox.env.example.\n' >"$tmp"
	fi
	printf '%s=%s\n' "$key" "$val" >>"$tmp"
	chmod 0600 "$tmp"
	mv -f "$tmp" "$AS_ENV_FILE"
}

# 48 hex characters from the kernel's random source.
as_gen_key() {
	od -An -tx1 -N24 /dev/urandom | tr -d ' \n'
}

# --- systemd unit ----------------------------------------------------------------

# The service, and the optional socket unit next to it (installed, never
# enabled here: systemctl enable --now agent-sandbox.socket turns socket
# activation on).
as_install_unit() {
	local name src dst changed=0

	[ -d "$(dirname "$AS_UNIT_FILE")" ] || return 0
	for name in agent-sandbox.service agent-sandbox.socket; do
		src=$AS_REPO_ROOT/etc/$name
		dst=$(dirname "$AS_UNIT_FILE")/$name
		[ -f "$src" ] || continue
		cmp -s "$src" "$dst" && continue
		log "installing $dst"
		install -m 0644 "$src" "$dst"
		changed=1
	done
	if [ "$changed" = 1 ] && as_have_systemd; then
		systemctl daemon-reload || warn "systemctl daemon-reload failed"
	fi
}
