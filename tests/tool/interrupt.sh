#!/bin/sh
# Ctrl-C in the middle of a command: exit status 130, one line on stderr
# ("lplab: interrupted: nothing was written"), no output file, nothing on
# stdout. Usage: interrupt.sh WORKDIR TOOL ARGS... (ARGS may name
# WORKDIR/out, which must not exist afterwards).
set -u
work=$1
shift
rm -rf "$work" && mkdir -p "$work" || exit 1
"$@" >"$work/stdout" 2>"$work/stderr" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
fail() { echo "$*"; echo "stderr: $(cat "$work/stderr")"; exit 1; }
[ "$rc" -eq 130 ] || fail "expected exit status 130, got $rc"
[ "$(cat "$work/stderr")" = "lplab: interrupted: nothing was written" ] || fail "unexpected stderr"
[ ! -s "$work/stdout" ] || fail "stdout is not empty: $(head -c 200 "$work/stdout")"
[ ! -e "$work/out" ] || fail "$work/out was written"
exit 0
