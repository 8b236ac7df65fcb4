#!/usr/bin/env bash
# Proves the README's two commands on a machine with nothing installed: makes a
# clean Debian 12 root (debootstrap --variant=minbase bookworm), clones this
# repository's committed HEAD into it, and runs, inside it with chroot,
#   1. bash scripts/run.sh                          (the main job)
#   2. LPLAB_SKIP_EXHAUSTIVE=1 bash scripts/test.sh (the tests, sweeps skipped)
# It prints the time of each and exits non-zero if either fails. Run as root.
# It runs in a mount namespace of its own (unshare), so what it mounts is never
# seen by the rest of the machine and vanishes with it whatever happens, even
# on SIGKILL; on any other exit, Ctrl-C or kill included, it also stops what
# still runs in the root and removes the root (LPLAB_KEEP_ROOT=1 keeps it).
#
# The only thing carried over from this machine is its network trust: the CA
# certificates added under /usr/local/share/ca-certificates (an intercepting
# proxy's, where there is one) and /etc/resolv.conf — what any fresh machine
# of the same network has. No package, toolchain or file of the project is.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm
mirror=${LPLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "check-fresh-debian: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run as root (debootstrap and chroot need it)"
# Into a private mount namespace: on hosts where / and /dev are shared mounts
# (systemd's default), a bind of /dev would otherwise carry our mounts back
# into the host's /dev.
if [[ "${LPLAB_FRESH_NAMESPACE:-}" != 1 ]]; then
  command -v unshare >/dev/null || die "needs unshare (Debian package util-linux)"
  LPLAB_FRESH_NAMESPACE=1 exec unshare --mount --propagation private -- bash "$0" "$@"
fi
git -C "$repo" rev-parse --verify -q HEAD >/dev/null || die "$repo is not a git checkout with a commit"
if ! command -v debootstrap >/dev/null; then
  echo "== installing debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    die "cannot install debootstrap (Debian package 'debootstrap')"
fi

root=$(mktemp -d /var/tmp/lplab-fresh-debian.XXXXXX)
# Every process whose root directory is the new root: what runs inside it.
processes_in_root() {
  local p
  for p in /proc/[0-9]*; do
    [[ "$(readlink "$p/root" 2>/dev/null)" == "$root" ]] && echo "${p#/proc/}"
  done
  return 0
}
# A process and all its descendants, killed (children first found, so none
# is orphaned on the way).
children_of() {  # from /proc, so that no procps is needed
  local parent=$1 stat fields
  for stat in /proc/[0-9]*/stat; do
    fields=$(<"$stat") 2>/dev/null || continue
    fields=${fields##*) }  # past "pid (comm) ": state, then the parent's pid
    set -- $fields
    [[ "${2:-}" == "$parent" ]] || continue
    stat=${stat#/proc/}
    echo "${stat%/stat}"
  done
}
kill_tree() {
  local child
  for child in $(children_of "$1"); do kill_tree "$child"; done
  kill -9 "$1" 2>/dev/null || true
}
# Every mount point under the new root.
mounted() { findmnt -rn -o TARGET | awk -v r="$root/" 'index($0, r) == 1'; }
cleanup() {
  local status=$? pids pid
  trap - EXIT INT TERM
  if ((status == 130 || status == 143)); then echo "check-fresh-debian: interrupted; cleaning up" >&2; fi
  # What this script started (debootstrap, chroot) and what runs in the root.
  for pid in $(jobs -p); do kill_tree "$pid"; done
  pids=$(processes_in_root)
  [[ -z "$pids" ]] || kill -9 $pids 2>/dev/null || true
  wait 2>/dev/null || true
  # Everything mounted under the root (ours and debootstrap's), deepest first.
  mounted | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  rm -f "$root.debootstrap.log"
  if [[ "${LPLAB_KEEP_ROOT:-0}" == 1 ]]; then
    echo "check-fresh-debian: root kept at $root"
  elif [[ -n "$(mounted)" ]]; then
    echo "check-fresh-debian: something is still mounted under $root; not removing it" >&2
  else
    rm -rf --one-file-system "$root" || echo "check-fresh-debian: could not remove all of $root" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount_into() {  # mount_into ARGS... TARGET
  mkdir -p "${*: -1}"
  mount "$@"
}

clock() { date +%s; }
took() { local s=$(($(clock) - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

echo "== debootstrap --variant=minbase $suite into $root"
t=$(clock)
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 &
wait $! || { tail -20 "$root.debootstrap.log" >&2; die "debootstrap failed"; }
rm -f "$root.debootstrap.log"
echo "   clean root made in $(took "$t")"

# The network trust of this machine (see the header), nothing else.
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi

mount_into -t proc proc "$root/proc"
mount_into -t sysfs sys "$root/sys"
mount_into --bind /dev "$root/dev"
mount_into --bind /dev/pts "$root/dev/pts"
mount_into -t tmpfs tmpfs "$root/dev/shm"

# A clone of the committed tree (made from outside: the root has no git).
git clone -q --no-hardlinks "$repo" "$root/root/lplab"
echo "   cloned $(git -C "$repo" rev-parse --short HEAD) into /root/lplab"

in_root() {  # a login-like clean environment: none of this machine's variables
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    "$@"
}

# step NAME LOG COMMAND: runs COMMAND in the root, prints its time, and on
# failure the end of its log; the time goes into times[NAME].
declare -A times
status=0
step() {
  local name=$1 log=$2 command=$3 t
  echo "== $name: $command"
  t=$(clock)
  # In the background, waited for: a signal then interrupts the wait at once
  # (bash defers traps while a foreground command runs).
  in_root bash -c "cd /root/lplab && $command" >"$root/$log" 2>&1 &
  if wait $!; then
    times[$name]=$(took "$t")
    echo "   PASSED in ${times[$name]}"
    return 0
  fi
  echo "   FAILED after $(took "$t"); last lines:"
  tail -40 "$root/$log" | sed 's/^/   | /'
  status=1
  return 1
}
step main-job run.log "bash scripts/run.sh" || true
if step tests test.log "LPLAB_SKIP_EXHAUSTIVE=1 bash scripts/test.sh"; then
  grep -E "tests passed|tests failed|\(Skipped\)|CUDA oracle headers" "$root/test.log" | sed 's/^/   | /' || true
fi

if ((status == 0)); then
  echo "check-fresh-debian: both commands passed in a clean Debian 12 root (main job ${times[main-job]}, tests ${times[tests]})"
else
  echo "check-fresh-debian: FAILED" >&2
fi
exit "$status"
