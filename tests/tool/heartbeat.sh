#!/usr/bin/env bash
# Long work is never silent where stderr is no terminal (issue 42: a 4096^3
# regress check printed nothing for 115 s): with LPLAB_PROGRESS_SECONDS=1, a
# run of a few seconds prints "lplab: underflow: N% after K s" lines on
# stderr, its percentages never decrease, and the output file is complete.
# (The run is sized to last well over a second on any CPU lplab runs on;
# the assertion is on what is printed, not on how fast.)
set -u
lplab=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LPLAB_PROGRESS_SECONDS=1 "$lplab" run underflow --param n=2000000 --dtypes float16 --param schemes=none \
  --threads 1 --out "$work/u.json" 2> "$work/err.txt"
rc=$?
[ "$rc" = 0 ] || { echo "FAIL: exit $rc: $(cat "$work/err.txt")"; exit 1; }
grep -Eq '^lplab: underflow: [0-9]+% after [0-9]+ s$' "$work/err.txt" || { echo "FAIL: no progress line: $(cat "$work/err.txt")"; exit 1; }
if grep -vEq '^lplab: underflow: [0-9]+% after [0-9]+ s$' "$work/err.txt"; then echo "FAIL: other stderr lines: $(cat "$work/err.txt")"; exit 1; fi
sed -E 's/.* ([0-9]+)% .*/\1/' "$work/err.txt" | sort -n -c || { echo "FAIL: the percentage went down"; exit 1; }
head -c 1 "$work/u.json" | grep -q '{' || { echo "FAIL: the output is not the JSON record"; exit 1; }
# 0 turns the lines off.
LPLAB_PROGRESS_SECONDS=0 "$lplab" run underflow --param n=1000000 --dtypes float16 --param schemes=none \
  --threads 1 --out "$work/u.json" 2> "$work/err.txt"
[ ! -s "$work/err.txt" ] || { echo "FAIL: LPLAB_PROGRESS_SECONDS=0 printed: $(cat "$work/err.txt")"; exit 1; }
echo "ok: $(wc -l < "$work/err.txt") lines with 0, progress lines with 1"
