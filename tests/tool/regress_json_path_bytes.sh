#!/bin/sh
# `lplab regress SPEC --output json` where an input's file name is not UTF-8
# (a byte 0xff, as a Linux file name may hold): the check runs, and the JSON
# names the file with U+FFFD for that byte, as the JUnit file does -- it was
# nlohmann's exception after every check had run, an internal error (exit
# status 3) with nothing written. Usage: regress_json_path_bytes.sh WORKDIR
# TOOL NPY (NPY: any float .npy file).
set -u
LC_ALL=C  # grep matches bytes, whatever the locale
export LC_ALL
work=$1 tool=$2 npy=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
cp "$npy" "$work/$(printf 'in\377put.npy')" || exit 1
printf 'checks:\n  - name: bytes\n    convert: {format: bf16, input: in\377put.npy}\n    max_abs_err: 1\n' \
  >"$work/spec.yaml" || exit 1
"$tool" regress "$work/spec.yaml" --output json >"$work/stdout" 2>"$work/stderr"
rc=$?
fail() { echo "$*"; echo "stderr: $(cat "$work/stderr")"; exit 1; }
[ "$rc" -eq 0 ] || fail "expected exit status 0, got $rc"
[ ! -s "$work/stderr" ] || fail "unexpected stderr"
grep -q "/in$(printf '\357\277\275')put.npy (" "$work/stdout" || fail "no U+FFFD in the context: $(cat "$work/stdout")"
! grep -q "$(printf '\377')" "$work/stdout" || fail "the byte 0xff was written into the JSON"
exit 0
