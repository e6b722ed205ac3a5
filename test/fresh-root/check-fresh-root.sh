#!/usr/bin/env bash
# The fresh-machine check (CI, issue #11): the README's two commands, exactly
# as written, on a minimal Debian 12 root with nothing installed by hand.
#
#   1. Base root: `debootstrap --variant=minbase bookworm` with the apt sources
#      of a stock Debian 12 (bookworm, bookworm-updates, bookworm-security),
#      cached as a tarball keyed by the release. Built once, never modified.
#   2. Every run unpacks a fresh copy of it, copies a clean clone of the
#      repository (HEAD of REPO, default: this checkout) into /root/ke, and in a
#      chroot runs `bash scripts/run-example.sh`, then `bash scripts/test.sh`.
#      setup.sh therefore starts from the bare base every time, so a package
#      missing from it fails the check.
#   3. Only downloads and compiles are cached between runs: apt's .deb files,
#      ccache and pip's wheel cache are bind-mounted from the cache directory.
#      They change how long the commands take, never what is installed.
#      From the host the root takes only what any machine of this kind has
#      from boot: the resolver and the local CA certificates of its network.
#
# Usage: check-fresh-root.sh [REPO]     (as root: debootstrap, chroot, mount)
# Environment:
#   KE_FRESH_ROOT_CACHE   cache directory (default ~/.cache/ke/fresh-root)
#   KE_DEBIAN_MIRROR      archive for debootstrap (default http://deb.debian.org/debian)
#   KE_FRESH_ROOT_KEEP=1  keep the root after the run (for debugging)
# The logs of the last run stay in $KE_FRESH_ROOT_CACHE/logs.
# Exit status: 0 when both commands pass; 1 with a message saying which step
# failed (and the tail of its log) otherwise. It never passes without running.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "${1:-$here/../..}" && pwd)
release=bookworm
mirror=${KE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian}/debian-security
cache=${KE_FRESH_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ke/fresh-root}
base_tar=$cache/debian-$release-minbase.tar
stamp() { date +%s; }
say() { echo "fresh-root: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (debootstrap, chroot and mount)"
mkdir -p "$cache"/{apt-archives,home-cache,work}

if ! command -v debootstrap > /dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null ||
    die "apt-get could not install debootstrap"
fi

# --- 1. The cached base root ------------------------------------------------
if [[ ! -f "$base_tar" ]]; then
  t0=$(stamp)
  say "bootstrapping a minimal Debian $release from $mirror (cached in $base_tar)"
  tmp=$(mktemp -d "$cache/work/base.XXXXXX")
  if ! debootstrap --variant=minbase "$release" "$tmp/root" "$mirror" \
      > "$tmp/debootstrap.log" 2>&1; then
    tail -n 20 "$tmp/debootstrap.log" >&2
    rm -rf --one-file-system "$tmp"
    die "debootstrap of $release from $mirror failed (is the package archive reachable?)"
  fi
  # The apt sources of a stock Debian 12 install (deb822, as the installer writes).
  rm -f "$tmp/root/etc/apt/sources.list"
  cat > "$tmp/root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security_mirror
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*
  tar -C "$tmp/root" -cf "$base_tar.partial" . && mv "$base_tar.partial" "$base_tar"
  rm -rf --one-file-system "$tmp"
  say "base root ready in $(( $(stamp) - t0 )) s"
fi

# --- 2. A fresh copy and a clean clone ---------------------------------------
work=$(mktemp -d "$cache/work/run.XXXXXX")
root=$work/root
mounts=()
# Processes whose root is the fresh root (a build the check was killed in).
kill_root_processes() {
  local proc
  for proc in /proc/[0-9]*; do
    [[ "$(readlink "$proc/root" 2> /dev/null)" == "$root" ]] &&
      kill -KILL "${proc#/proc/}" 2> /dev/null
  done
  return 0
}
cleanup() {
  local status=$?
  kill_root_processes
  sleep 1
  # Unmount in reverse order; the bind mounts (caches, /dev) must be gone
  # before anything under the root is deleted.
  for (( i=${#mounts[@]}-1; i>=0; i-- )); do
    umount -R "${mounts[i]}" 2> /dev/null || umount -l -R "${mounts[i]}" 2> /dev/null || true
  done
  if findmnt -rn -o TARGET | grep -q "^$root"; then
    say "WARNING: mounts remain under $root; not deleting it"
  elif [[ "${KE_FRESH_ROOT_KEEP:-0}" == 1 ]]; then
    say "kept $work"
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$(stamp)
mkdir -p "$root"
tar -C "$root" -xf "$base_tar"
git clone --quiet --no-local "$repo" "$root/root/ke" ||
  die "could not clone $repo"
say "fresh root with a clean clone of $(git -C "$repo" rev-parse --short HEAD) in $(( $(stamp) - t0 )) s"

bind() {  # bind SRC DEST-inside-root [mount options]
  mkdir -p "$root$2"
  mount "${@:3}" --bind "$1" "$root$2"
  mounts+=("$root$2")
}
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
mount -t sysfs sysfs "$root/sys" && mounts+=("$root/sys")
bind /dev /dev
mount -t devpts devpts "$root/dev/pts" -o newinstance,ptmxmode=0666 && mounts+=("$root/dev/pts")
mount -t tmpfs tmpfs "$root/dev/shm" && mounts+=("$root/dev/shm")
mount -t tmpfs tmpfs "$root/tmp" && mounts+=("$root/tmp")
bind "$cache/apt-archives" /var/cache/apt/archives
bind "$cache/home-cache" /root/.cache
# KernelBench's problem files (external data, read-only) where the clone
# looks for them (../shared/kernelbench), for the kernelbench-cpu test.
kernelbench=${KE_KERNELBENCH:-$(cd "$repo/.." && pwd)/shared/kernelbench}
[[ -d $kernelbench/level1 ]] || kernelbench=/work/shared/kernelbench
if [[ -d $kernelbench/level1 ]]; then
  bind "$kernelbench" /root/shared/kernelbench -o ro
fi
# The network of a machine of this kind, which it has from boot: its resolver
# and its local trust anchors (an egress proxy's CA, which PyPI's TLS needs).
# ca-certificates, once setup.sh installs it, adds them to the system store.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" > /dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi

# --- 3. The README's two commands ---------------------------------------------
# A login shell of a fresh machine: nothing of this host's environment leaks in.
in_root() {
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -lc "cd /root/ke && $1"
}
# The logs outlive the root (a failed run's are what you read next).
logs=$cache/logs
rm -rf "$logs" && mkdir -p "$logs"
summary=""
for command in "bash scripts/run-example.sh" "bash scripts/test.sh"; do
  name=${command#bash scripts/}
  name=${name%.sh}
  say "running \`$command\` in the fresh root (log: $logs/$name.log)"
  t0=$(stamp)
  # In the background, so that a signal to the check ends it at once (the
  # EXIT trap then kills what runs in the root and unmounts).
  in_root "$command" > "$logs/$name.log" 2>&1 &
  if ! wait $!; then
    tail -n 60 "$logs/$name.log" >&2
    # A full disk or the OOM killer fail a build without a compiler message
    # (a CI run once stopped mid-line, unexplained): say what was left.
    say "disk and memory at the failure: $(df -h --output=avail "$cache" | tail -n 1 | tr -d ' ') free under $cache; $(free -m | awk '/^Mem:/ {print $7}') MiB of memory available"
    die "\`$command\` failed on a fresh Debian $release root after $(( $(stamp) - t0 )) s"
  fi
  summary+="${summary:+; }$command: $(( $(stamp) - t0 )) s"
  say "\`$command\` passed in $(( $(stamp) - t0 )) s"
done
tail -n 25 "$logs/test.log" >&2
say "PASS on a fresh Debian $release root ($summary)"
