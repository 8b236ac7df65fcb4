#!/bin/sh
# Ctrl-C in the middle of a command: exit status 130, one line on stderr
# ("lplab: interrupted: nothing was written"), no output file, nothing on
# stdout. Usage: interrupt.sh WORKDIR TOOL ARGS... (ARGS may name
# WORKDIR/out, which must not exist afterwards).
#
# Ctrl-C is sent once the tool has installed its handler -- SIGINT (signal 2,
# mask 0x2) set in SigCgt of /proc/PID/status (proc(5)), once PID runs the
# tool rather than this shell's forked copy, which catches SIGINT until it
# execs -- rather than after a fixed sleep: on a loaded machine the tool may
# not have got that far in a second, and the test would measure the machine
# rather than the tool. The command must run for longer than a poll
# (tests/tool/specs/long.yaml runs for seconds).
set -u
export LPLAB_PROGRESS_SECONDS=0  # one stderr line is checked; heartbeat.sh tests progress lines
work=$1
shift
rm -rf "$work" && mkdir -p "$work" || exit 1
"$@" >"$work/stdout" 2>"$work/stderr" &
pid=$!
# The last hex digit of SigCgt holds signals 1 to 4; SIGINT is its bit 0x2.
# exec resets caught signals, so after it the mask is the tool's own.
shell_exe=$(readlink "/proc/$$/exe")
catches_sigint() {
  exe=$(readlink "/proc/$1/exe" 2>/dev/null)
  [ -n "$exe" ] && [ "$exe" != "$shell_exe" ] || return 1
  mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
  [ -n "$mask" ] && [ $(( 0x${mask#"${mask%?}"} & 2 )) -ne 0 ]
}
# Ended: gone, or a zombie not yet waited for (State: Z).
ended() { ! grep -q '^State:[[:space:]]*[^Z]' "/proc/$1/status" 2>/dev/null; }
if [ -r "/proc/$pid/status" ]; then
  tries=0
  until catches_sigint "$pid"; do
    if ended "$pid"; then
      wait "$pid"
      echo "the command ended (exit status $?) before it caught SIGINT"
      echo "stderr: $(cat "$work/stderr")"
      exit 1
    fi
    tries=$((tries + 1))
    [ "$tries" -le 6000 ] || { kill -KILL "$pid"; echo "no SIGINT handler after 10 minutes"; exit 1; }
    sleep 0.1
  done
else
  sleep 1  # no /proc: the old wait
fi
kill -INT "$pid"
wait "$pid"
rc=$?
fail() { echo "$*"; echo "stderr: $(cat "$work/stderr")"; exit 1; }
[ "$rc" -eq 130 ] || fail "expected exit status 130, got $rc"
[ "$(cat "$work/stderr")" = "lplab: interrupted: nothing was written" ] || fail "unexpected stderr"
[ ! -s "$work/stdout" ] || fail "stdout is not empty: $(head -c 200 "$work/stdout")"
[ ! -e "$work/out" ] || fail "$work/out was written"
exit 0
