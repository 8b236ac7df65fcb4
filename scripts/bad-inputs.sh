#!/usr/bin/env bash
# Tries the tool as a careless or hostile user would: every command with bad
# option values, bad files, bad environment, bad specs and shard files, and
# prints one Markdown row per case: the command, its exit code, the first
# line of its stderr and a verdict.
#
#   bash scripts/bad-inputs.sh [LPLAB] > bad-inputs.md
#
# LPLAB defaults to build/release/tools/lplab. Verdicts: "refused" (exit 2
# and exactly one line on stderr, nothing on stdout), "ok" (a case that is
# valid input and must succeed, exit 0), "check failed" (a spec check that
# fails, exit 1, as documented), and anything else is "PROBLEM: ..." -- a
# crash, a signal, a silent acceptance, more than one line. The script exits
# 1 if any case is a problem. It takes about a minute (some cases do work
# before their input is refused by design, e.g. a spec whose second file is
# bad). Not a CI test: the table is evidence for the reader, and the CLI
# tests (tests/tool) pin the individual messages.
set -uo pipefail
export LPLAB_PROGRESS_SECONDS=0  # the table counts stderr lines; tests/tool/heartbeat.sh tests progress
here=$(cd "$(dirname "$0")/.." && pwd)
lplab=${1:-$here/build/release/tools/lplab}
[[ -x $lplab ]] || { echo "bad-inputs: $lplab is not an executable; build first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# --- the bad files ----------------------------------------------------------
npy() {  # npy FILE DESCR SHAPE BYTES-PRINTF
  local header="{'descr': '$2', 'fortran_order': False, 'shape': ($3), }"
  local pad=$(( 64 - (10 + ${#header} + 1) % 64 ))
  header+=$(printf '%*s' "$pad" '')
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#header} + 1) & 255 )))\\x$(printf %02x $(( (${#header} + 1) >> 8 )))";
    printf '%s\n' "$header"; printf "$4"; } > "$1"
}
npy good.npy '<f8' '2,' '\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40'
npy allnan.npy '<f8' '2,' '\x00\x00\x00\x00\x00\x00\xf8\x7f\x00\x00\x00\x00\x00\x00\xf8\x7f'
npy ints.npy '<i4' '2,' '\x01\x00\x00\x00\x02\x00\x00\x00'
npy short.npy '<f8' '4,' '\x00\x00\x00\x00\x00\x00\xf0\x3f'
npy empty.npy '<f8' '0,' ''
npy raw2.npy '<V2' '2,' '\x80\x3f\x00\x40'
npy huge.npy '<f8' '99999999999999999999,' ''
npy obj.npy '|O' '1,' '\x00'
npy matrix.npy '<f8' '1, 2' '\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40'
printf 'not a numpy file' > text.npy
: > zero.npy
printf '\x93NUMPY\x01\x00\xff\xff{' > badheader.npy
mkdir -p adir report_foreign
echo mine > report_foreign/notes.txt
ln -s /nonexistent/target dangling.npy
"$lplab" run footprint --output json --out shard_ok.json >/dev/null 2>&1
"$lplab" run footprint --output json --shard 0/2 --out shard0.json >/dev/null 2>&1
"$lplab" run error --param n=64 --output json --shard 1/2 --out other1.json >/dev/null 2>&1
printf '{}' > emptyobj.json
printf '[1, 2' > broken.json
sed 's/"grid_index": *[0-9]*/"grid_index": 99999999/' shard0.json > badindex.json
sed '0,/"bits_per_element": *[0-9.e+-]*/s//"bits_per_element": "eight"/' shard0.json > stringcell.json
spec() { printf '%s\n' "$2" > "$1"; }
spec s_empty.yaml ''
spec s_list.yaml '- 1'
spec s_nochecks.yaml 'checks: []'
spec s_syntax.yaml 'checks: [ {name: a'
spec s_unknown_key.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: good.npy}\n    max_abs_err: 1\n    bogus: 1'
spec s_bad_format.yaml $'checks:\n  - name: a\n    convert: {format: bf17, input: good.npy}\n    max_abs_err: 1'
spec s_group.yaml $'checks:\n  - name: a\n    convert: {format: fp8, input: good.npy}\n    max_abs_err: 1'
spec s_missing_file.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: nope.npy}\n    max_abs_err: 1'
spec s_text_file.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: text.npy}\n    max_abs_err: 1'
spec s_ints.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: ints.npy}\n    max_abs_err: 1'
spec s_raw_nodtype.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: raw2.npy}\n    max_abs_err: 1'
spec s_nan_limit.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: good.npy}\n    max_abs_err: nan'
spec s_neg_n.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: {distribution: normal, n: -5, seed: 1}}\n    max_abs_err: 1'
spec s_huge_n.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: {distribution: normal, n: 1e30, seed: 1}}\n    max_abs_err: 1'
spec s_dup.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: good.npy}\n    max_abs_err: 1\n  - name: a\n    convert: {format: bf16, input: good.npy}\n    max_abs_err: 1'
spec s_matmul_k.yaml $'checks:\n  - name: a\n    matmul: {a: e4m3, accumulator: fp32, seed: 1}\n    max_rel_err: 1'
spec s_matmul_huge.yaml $'checks:\n  - name: a\n    matmul: {a: e4m3, accumulator: fp32, seed: 1, m: 2147483648, k: 2}\n    max_rel_err: 1'
spec s_matmul_vec.yaml $'checks:\n  - name: a\n    matmul: {a: good.npy, b: good.npy, accumulator: fp32}\n    max_rel_err: 1'
spec s_matmul_beyond_float.yaml $'checks:\n  - name: a\n    matmul: {a: e8m7:bias=100, accumulator: fp32, k: 64}\n    max_rel_err: 1'
spec s_matmul_shape.yaml $'checks:\n  - name: a\n    matmul: {a: {path: matrix.npy, format: bf16}, b: {path: matrix.npy, format: bf16}, accumulator: fp32}\n    max_rel_err: 1'
spec s_delayed_row.yaml $'checks:\n  - name: a\n    quantize: {scheme: fp8_e4m3_delayed, input: good.npy}\n    max_abs_err: 1'
spec s_scheme.yaml $'checks:\n  - name: a\n    quantize: {scheme: mxfp9, input: good.npy}\n    max_abs_err: 1'
spec s_compare_shape.yaml $'checks:\n  - name: a\n    compare: {actual: good.npy, expected: matrix.npy}\n    max_abs_err: 1'
spec s_failing.yaml $'checks:\n  - name: a\n    convert: {format: e4m3, input: good.npy}\n    max_abs_err: 0\n  - name: b\n    convert: {format: e2m1, input: {distribution: normal, n: 100, seed: 1}}\n    max_abs_err: 0'
spec s_binary.yaml $'\x00\x01\x02'
spec s_two_docs.yaml $'checks: []\n---\nchecks: []'
spec s_good.yaml $'checks:\n  - name: a\n    convert: {format: bf16, input: good.npy}\n    max_abs_err: 1'

# Checksums of the files a case must not change (KEEP=FILE).
declare -A kept
keep() { local f; for f in "$@"; do kept[$f]=$(cksum < "$f"); done; }

# --- the cases ----------------------------------------------------------------
problems=0
count=0
echo "| # | command | exit | stderr (first line) | verdict |"
echo "|---|---|---|---|---|"
# case EXPECT [ENV=VALUE ...] -- ARGS...: EXPECT is refused, ok or failed.
case_() {
  local expect=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  count=$((count + 1))
  # Pseudo-settings: KEEP=FILE (checked below), ULIMIT='-f 1' (a shell
  # limit for the run), AS_OTHER=1 (run as user 65534, where root may).
  local real_envs=() ulim="" as_other=() e
  for e in "${envs[@]}"; do
    case $e in KEEP=*) ;; ULIMIT=*) ulim=${e#ULIMIT=};; AS_OTHER=1) as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups);;
               *) real_envs+=("$e");; esac
  done
  (
    # shellcheck disable=SC2086
    [[ -z $ulim ]] || ulimit $ulim
    exec "${as_other[@]}" env "${real_envs[@]}" timeout 120 "$lplab" "$@"
  ) > out.txt 2> err.txt < /dev/null
  local rc=$?
  local lines first verdict
  lines=$(wc -l < err.txt)
  first=$(head -n 1 err.txt | cut -c1-160 | sed 's/|/\\|/g')
  local outbytes; outbytes=$(wc -c < out.txt)
  if grep -qiE 'sanitizer|terminate called|internal error|segmentation|stack trace|core dumped' err.txt || ((rc >= 124)); then
    verdict="PROBLEM: crash or signal ($rc)"
  elif [[ $expect == refused ]]; then
    if ((rc == 2 && lines == 1 && outbytes == 0)); then verdict=refused
    elif ((rc == 0)); then verdict="PROBLEM: accepted"
    else verdict="PROBLEM: exit $rc, $lines stderr lines, $outbytes stdout bytes"; fi
  elif [[ $expect == written_then_refused ]]; then
    if ((rc == 2 && lines == 1)); then verdict="refused (after the results)"; else verdict="PROBLEM: exit $rc"; fi
  elif [[ $expect == failed ]]; then
    if ((rc == 1)); then verdict="check failed"; else verdict="PROBLEM: exit $rc, expected 1"; fi
  elif [[ $expect == unwritable ]]; then  # an output that cannot be written: 1 (3 from regress), one line
    if (((rc == 1 || rc == 3) && lines == 1)); then verdict="write refused"; else verdict="PROBLEM: exit $rc, $lines stderr lines"; fi
  elif [[ $expect == interrupted ]]; then
    if ((rc == 130 && lines == 1)); then verdict=interrupted; else verdict="PROBLEM: exit $rc, $lines stderr lines"; fi
  else
    if ((rc == 0)); then verdict=ok; else verdict="PROBLEM: exit $rc, expected 0"; fi
  fi
  # A file the case must leave as it was (KEEP=FILE among the envs).
  local e
  for e in "${envs[@]}"; do
    if [[ $e == KEEP=* && $verdict != PROBLEM* ]] && [[ "$(cksum < "${e#KEEP=}")" != "${kept[${e#KEEP=}]}" ]]; then
      verdict="PROBLEM: ${e#KEEP=} was changed"
    fi
  done
  if [[ $verdict != PROBLEM* ]] && ls -A "$work" | grep -q '\.lplab-[0-9]*\.tmp$'; then
    verdict="PROBLEM: a temporary file was left: $(ls -A "$work" | grep '\.lplab-[0-9]*\.tmp$' | head -1)"
  fi
  [[ $verdict == PROBLEM* ]] && problems=$((problems + 1))
  local shown="${envs[*]:+${envs[*]} }lplab $*"
  shown=${shown//$work\//}
  printf '| %d | `%s` | %d | %s | %s |\n' "$count" "${shown//|/\\|}" "$rc" "${first:-(nothing)}" "$verdict"
}

commands=(formats finfo inspect values list run merge account report regress mma)
# Every command: an unknown option, a bad --output, a bad SIMD target.
for c in "${commands[@]}"; do case_ refused -- "$c" --bogus-option; done
for c in formats finfo list run merge account regress inspect values mma; do
  args=()
  case $c in run) args=(footprint);; merge) args=(shard_ok.json);; regress) args=(s_good.yaml);;
             inspect) args=(1.5);; values) args=(e4m3);; finfo) args=(fp16);; account) args=(params=1);;
             mma) args=(--list);; esac
  case_ refused -- "$c" "${args[@]}" --output yaml
  case_ refused -- "$c" "${args[@]}" --output ''
  case_ refused LPLAB_SIMD_TARGET=AVX9 -- "$c" "${args[@]}"
  case_ refused LPLAB_SIMD_TARGET=avx2 -- "$c" "${args[@]}"
done
case_ refused LPLAB_SIMD_TARGET=AVX9 -- report --quick --out "$work/r_simd"
case_ refused -- bogus-command
case_ refused -- --versio
case_ refused -- run
case_ refused -- run nosuchexperiment
case_ refused -- run footprnt
case_ refused -- run footprint extra-argument

# run: dtypes, shards, threads, input, out.
for d in bf17 '' ',' 'fp16,,bf16' 'e8m0 e9m9' float64x fp8x; do case_ refused -- run footprint --dtypes "$d"; done
for s in 1 a/b 2/2 0/0 -1/2 '1/99999999999999999999' '0/2/3' ' 0/2' 0x1/2; do case_ refused -- run footprint --shard "$s"; done
for t in -1 abc 1e9 99999999999999999999 ''; do case_ refused -- run footprint --threads "$t"; done
for f in nope.npy adir text.npy zero.npy badheader.npy ints.npy short.npy empty.npy huge.npy obj.npy dangling.npy raw2.npy /dev/null; do
  case_ refused -- run error --input "$work/$f"
done
case_ refused -- run error --input "$work/allnan.npy"
case_ refused -- run footprint --input "$work/good.npy"
case_ refused -- run error --input "$work/raw2.npy" --input-dtype bf17
case_ refused -- run error --input "$work/raw2.npy" --input-dtype float32
case_ refused -- run error --input-dtype bfloat16
case_ refused -- run error --dtypes e8m0
for d in e9m6 e8m7:bias=100 e5m2:bias=200 e8m0 fp32 e3m3:unsigned:fn,e9m6; do case_ refused -- run matmul_error --dtypes "$d"; done
case_ refused -- run footprint --dtypes e3m3
# matrix_units: a format no unit takes (fp32, an e4m3 layout whose values no
# e4m3 type holds, a declared one), k not whole block-scaled instructions.
for d in fp32 e4m3b11fnuz e8m0 e3m3; do case_ refused -- run matrix_units --dtypes "$d"; done
for b in mxfp4 nvfp4 mxfp8_e4m3,bogus ''; do case_ refused -- run matrix_units --param ks=96 --param block_schemes="$b"; done
case_ refused -- run matrix_units --param ks=64.5
for o in "$work/adir" "$work/nodir/x.csv" /proc/version; do case_ refused -- run footprint --out "$o"; done
case_ unwritable -- run footprint --out /dev/full

# run: every parameter of every experiment with bad values.
experiments=$("$lplab" list --output json | sed -nE 's/.*"name": "([a-z_]+)".*/\1/p')
for e in $experiments; do
  case_ refused -- run "$e" --param nosuchparam=1
  case_ refused -- run "$e" --param novalue
  case_ refused -- run "$e" --param =1
  # NAME:TYPE of each parameter; a 23-digit value is out of every integer
  # parameter's range (and inside some real ones', which take it).
  params=$("$lplab" list "$e" --output json | tr -d '\n' | grep -oE '"name": "[a-z_0-9]+", *"type": "[a-z]+"' |
           sed -E 's/"name": "([a-z_0-9]+)", *"type": "([a-z]+)"/\1:\2/')
  for pt in $params; do
    p=${pt%%:*}
    for v in abc '' nan -inf 1e400 -1e400 '1,,2' ' ' '1 2' 0x1q; do
      case_ refused -- run "$e" --param "$p=$v"
    done
    [[ ${pt##*:} == integer ]] && case_ refused -- run "$e" --param "$p=99999999999999999999999"
  done
done

# merge.
case_ refused -- merge
for f in nope.json adir broken.json emptyobj.json good.npy badindex.json stringcell.json; do case_ refused -- merge "$work/$f"; done
case_ refused -- merge "$work/shard0.json" "$work/other1.json"
case_ refused -- merge "$work/shard0.json" "$work/shard0.json"
case_ refused -- merge "$work/shard0.json"
case_ refused -- merge "$work/shard_ok.json" --out "$work/adir"

# account.
for a in params paramsx=1 params=abc params=-1 params=1e400 '=5' tokens=nan 'params=1 params=2' mfu=2; do
  # shellcheck disable=SC2086
  case_ refused -- account $a
done

# report.
case_ refused -- report --out "$work/good.npy"
case_ refused -- report --out "$work/report_foreign"
case_ refused -- report --out /dev/full
case_ refused -- report --out /proc/lplab-report
case_ refused -- report --quick extra

# regress.
for f in nope.yaml adir s_empty.yaml s_list.yaml s_nochecks.yaml s_syntax.yaml s_unknown_key.yaml s_bad_format.yaml \
         s_group.yaml s_missing_file.yaml s_text_file.yaml s_ints.yaml s_raw_nodtype.yaml s_nan_limit.yaml s_neg_n.yaml \
         s_huge_n.yaml s_dup.yaml s_matmul_k.yaml s_matmul_huge.yaml s_matmul_vec.yaml s_matmul_shape.yaml s_matmul_beyond_float.yaml \
         s_delayed_row.yaml s_scheme.yaml s_compare_shape.yaml s_binary.yaml s_two_docs.yaml /dev/zero; do
  case_ refused -- regress "$work/$f"
done
case_ refused -- regress "$work/s_good.yaml" --junit "$work/adir"
# The results are printed, then the JUnit file cannot be written: exit 3
# (regress's status for a failed output; its 1 means a failed check).
case_ unwritable -- regress "$work/s_good.yaml" --junit /dev/full
case_ refused -- regress --only nosuchsuite
case_ refused -- regress --baselines "$work/nope"
case_ refused -- regress "$work/s_good.yaml" --update
case_ refused -- regress "$work/s_good.yaml" "$work/s_good.yaml"
case_ failed -- regress "$work/s_failing.yaml"

# inspect, finfo, values, formats.
for v in abc '' 1e 1e+ -- 0x 0x1p '1.2.3' '--1' 'nan(0x' '1_000' '١' inf0 '+-1'; do
  case_ refused -- inspect "$v" --to bf16
done
case_ ok -- inspect 1e400 --to bf16
case_ ok -- inspect 1e-400 --to bf16
case_ ok -- inspect 1e99999999999999999999 --to bf16
case_ ok -- inspect 1.0625000000000000000001 --to e4m3
for c in 0x 0xZZ 0x100 -1 256 0b2 1.5 '' 0x7e0000000000000000000; do case_ refused -- inspect --code "$c" --to e4m3; done
case_ ok -- inspect --code 0x7e
case_ refused -- inspect 1 --code 0x7e --to e4m3
for r in nearest up '' stochastic_even; do case_ refused -- inspect 1.5 --round "$r"; done
for s in -1 abc 1e3 99999999999999999999999; do case_ refused -- inspect 1.5 --round stochastic --seed "$s"; done
case_ refused -- inspect 1.5 --seed 3
for o in clamp '' none; do case_ refused -- inspect 1.5 --overflow "$o"; done
for t in bf17 fp9 '' 'e4m3 e9m9'; do case_ refused -- inspect 1.5 --to "$t"; done
for f in bf17 '' fp32x; do case_ refused -- finfo "$f"; done
case_ ok -- finfo fp8
case_ ok -- finfo
case_ refused -- finfo fp16 --all
for f in fp32 fp64 fp8 bf17 ''; do case_ refused -- values "$f"; done
for o in random '' codes; do case_ refused -- values e4m3 --order "$o"; done
case_ refused -- values
case_ refused -- formats extra
case_ refused -- list nosuchexperiment

# mma: presets, operands, scales.
ones32=$(printf '1,%.0s' {1..31})1
for p in '' hopper.wgmma hopper.wgmma.f32.e4m3.e4m4 HOPPER.WGMMA.F32.E4M3.E4M3 'cdna3.mfma.f32_32x32x8_bf16 '; do
  case_ refused -- mma "$p" --a "$ones32" --b "$ones32"
done
case_ refused -- mma
case_ refused -- mma --list hopper.wgmma.f32.e4m3.e4m3
case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3
case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32"
for a in '' 1,2 "$ones32,1" 0.3 0x100 0xZZ nan, abc 1e400; do
  case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$a" --b "$ones32"
done
case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32" --b "$ones32,$ones32"
case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32" --b "$ones32" --c 1e-50
case_ refused -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32" --b "$ones32" --scale-a 1
case_ refused -- mma rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e2m1.e2m1.f32.ue8m0 --a "$ones32" --b "$ones32"
case_ refused -- mma rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e2m1.e2m1.f32.ue8m0 --a "$ones32" --b "$ones32" --scale-a 1,1 --scale-b 1
case_ refused -- mma rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e2m1.e2m1.f32.ue8m0 --a "$ones32" --b "$ones32" --scale-a 3 --scale-b 1
case_ ok -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32" --b "$ones32" --c 0x7fc00000
case_ ok -- mma hopper.wgmma.f32.e4m3.e4m3 --a "$ones32,$ones32" --b "$ones32,$ones32" --output json
case_ ok -- mma --list --output csv

# --- issue 42: nothing a user gives lplab is destroyed ------------------------
# Outputs that are inputs, by every spelling: the same name, ./name, an
# absolute path, a symbolic link and a hard link (named .json/.xml so that
# only their identity can refuse them).
cp s_good.yaml sg.yaml
ln -sf good.npy good-sym.json; ln -f good.npy good-hard.json; ln -sf good.npy good-sym.xml; ln -f good.npy good-hard.xml
ln -sf shard0.json shard0-sym.json; ln -f shard0.json shard0-hard.json
ln -sf sg.yaml sg-sym.xml; ln -f sg.yaml sg-hard.xml
"$lplab" run footprint --output json --shard 1/2 --out shard1.json >/dev/null 2>&1
keep good.npy shard0.json shard1.json sg.yaml
for o in good.npy ./good.npy "$work/good.npy" good-sym.json good-hard.json; do
  case_ refused KEEP=good.npy -- run error --input "$work/good.npy" --out "$o"
  case_ refused KEEP=good.npy -- run error --input good.npy --out "$o"
done
for o in shard0.json ./shard0.json "$work/shard0.json" shard0-sym.json shard0-hard.json shard1.json; do
  case_ refused KEEP=shard0.json KEEP=shard1.json -- merge shard0.json shard1.json --out "$o"
done
for o in sg.yaml ./sg.yaml "$work/sg.yaml" sg-sym.xml sg-hard.xml; do
  case_ refused KEEP=sg.yaml -- regress sg.yaml --junit "$o"
done
for o in good.npy good-sym.xml good-hard.xml; do
  case_ refused KEEP=good.npy KEEP=sg.yaml -- regress sg.yaml --junit "$o"
done

# Spellings through a directory and back (adir/../NAME), and the shards
# and the spec given by absolute path while the output is relative.
for o in adir/../good.npy adir/../good-hard.json adir/../good-sym.json ./adir/../good-sym.json; do
  case_ refused KEEP=good.npy -- run error --input "$work/good.npy" --out "$o"
done
for o in adir/../good-hard.xml adir/../good-sym.xml ./adir/../good-sym.xml "$work/adir/../good-hard.xml"; do
  case_ refused KEEP=good.npy KEEP=sg.yaml -- regress "$work/sg.yaml" --junit "$o"
done
for o in adir/../shard1.json "$work/adir/../shard0-hard.json" adir/../shard0-sym.json; do
  case_ refused KEEP=shard0.json KEEP=shard1.json -- merge "$work/shard0.json" "$work/shard1.json" --out "$o"
done
case_ refused KEEP=sg.yaml -- regress "$work/sg.yaml" --junit adir/../sg.yaml
case_ refused KEEP=sg.yaml -- regress "$work/sg.yaml" --junit adir/../sg-hard.xml

# Output paths every command refuses (or writes through, for devices), for
# run, merge and values (--out) and regress (--junit).
echo protected > ro.txt; chmod 444 ro.txt; keep ro.txt
mkdir -p shared; chmod 777 shared; echo theirs > shared/theirs.json; chmod 644 shared/theirs.json; keep shared/theirs.json
echo file > plainfile
long=$(printf 'n%.0s' $(seq 1 305)); deep=$(printf 'd/%.0s' $(seq 1 2100))
mkfifo fifo.json 2>/dev/null
for c in "run footprint" "merge shard0.json shard1.json" "values e4m3"; do
  # shellcheck disable=SC2086
  {
    case_ refused -- $c --out ''
    case_ refused -- $c --out "$work/adir"
    case_ refused -- $c --out "$work/adir/"
    case_ refused -- $c --out "$work/nodir/x.json"
    case_ refused -- $c --out plainfile/x.json
    case_ refused -- $c --out "$long.json"
    case_ refused -- $c --out "${deep}x.json"
    case_ refused -- $c --out /proc/version
    case_ refused -- $c --out /proc/lplab-new.json
    case_ refused KEEP=ro.txt -- $c --out ro.txt
    case_ refused -- $c --out x.npy
    case_ refused -- $c --out x.yaml
    case_ refused -- $c --out x.xml
    case_ refused -- $c --out x.json --output table
    case_ refused -- $c --out x.json --output csv
    case_ refused -- $c --out x.csv --output json
    case_ refused -- $c --out X.JSON --output csv
    case_ ok -- $c --out -
    case_ ok -- $c --out /dev/null
    case_ ok -- $c --out new.json
    case_ ok -- $c --out new.csv
    case_ ok -- $c --out new.txt --output table
    case_ unwritable -- $c --out /dev/full
    case_ unwritable ULIMIT='-f 1' -- $c --out big.json
    [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null && case_ refused AS_OTHER=1 KEEP=shared/theirs.json -- $c --out shared/theirs.json
  }
done
for o in '' "$work/adir" plainfile/x.xml "$long.xml" ro.txt x.json x.csv x.yaml; do
  case_ refused -- regress sg.yaml --junit "$o"
done
case_ ok -- regress sg.yaml --junit -
case_ refused -- report --out ''
case_ refused -- report --out -
case_ refused -- report --out plainfile/r
case_ refused -- report --out "$long"
case_ refused -- report --out "$work/plainfile"
case_ refused -- report --out "$work/ro.txt"
case_ refused -- report --out /proc/lplab-report-new

# Inputs that are not regular files, each refused with its real cause.
ln -sf /nonexistent/x.npy dangling2.npy
for f in /dev/urandom /dev/zero /dev/null fifo.json "$work/adir" plainfile/x.npy "$long.npy" "${deep}x.npy" nope.npy dangling2.npy; do
  case_ refused -- run error --input "$f"
  case_ refused -- merge "$f"
  case_ refused -- regress "$f"
done
chmod 600 sg.yaml
[[ $(id -u) == 0 ]] && command -v setpriv >/dev/null && case_ refused AS_OTHER=1 -- regress "$work/sg.yaml"
chmod 644 sg.yaml

# Limits: memory (ulimit -v) is refused before work, naming the need; the
# progress interval must be a number.
case_ refused ULIMIT='-v 400000' -- run error --param n=50000000
case_ refused ULIMIT='-v 400000' -- run matmul_error --param sizes=8192
for v in abc -1 1.5 9999999; do case_ refused LPLAB_PROGRESS_SECONDS="$v" -- formats; done
case_ ok LPLAB_PROGRESS_SECONDS=0 -- formats

# Encodings: bytes that are not UTF-8 in every name a user types; locales
# that write numbers otherwise (the parse is the C locale's, always).
bad=$'\xff\xfe'
case_ refused -- run "foot${bad}print"
case_ refused -- run footprint --dtypes "fp${bad}16"
case_ refused -- run footprint --param "n${bad}=1"
case_ refused -- run underflow --param "values=1${bad}"
case_ refused -- inspect "1${bad}" --to bf16
case_ refused -- inspect 1.5 --to "bf${bad}16"
case_ refused -- values "e4${bad}m3"
case_ refused -- finfo "fp${bad}"
case_ refused -- mma "hopper${bad}"
case_ refused -- "run${bad}"
for loc in C.UTF-8 de_DE.UTF-8 tr_TR.UTF-8 fr_FR; do
  case_ ok LC_ALL="$loc" -- inspect 0.1 --to bf16
  case_ ok LC_ALL="$loc" -- run underflow --param values=0.1,1e-8
  case_ refused LC_ALL="$loc" -- inspect 0,1 --to bf16
done

# Numbers read once, exactly (a double in between rounds twice).
case_ ok -- run underflow --dtypes fp16,e4m3,bf16 --param values=65519.99999999999999999999,1.0625000000000000000001,-1e-400
case_ ok -- inspect 0x1p-24 --to fp16
case_ ok -- inspect 0x1p-9 --to e4m3

# Help and near misses.
case_ ok --
case_ ok -- help
case_ ok -- help run
case_ refused -- help nosuchcommand
case_ refused -- help run extra
case_ refused -- reprot
case_ refused -- run footprnt
case_ refused -- run footprint --param nn=3
case_ refused -- run error --param opss=add
case_ refused -- inspect 1 --to fp8_e4m3

# Signals: Ctrl-C and SIGTERM leave no output and no temporary.
for sig in INT TERM; do
  count=$((count + 1))
  rm -f sig.json
  "$lplab" run underflow --param n=4000000 --threads 1 --out sig.json > out.txt 2> err.txt &
  pid=$!; sleep 1; kill -s "$sig" "$pid"; wait "$pid"; rc=$?
  verdict=interrupted
  if [[ -e sig.json ]] || ls -A | grep -q 'lplab-[0-9]*\.tmp$' || ((rc != 130)); then verdict="PROBLEM: exit $rc, $(ls -A | grep -c sig)"; problems=$((problems + 1)); fi
  printf '| %d | `lplab run underflow --param n=4000000 --threads 1 --out sig.json` + SIG%s after 1 s | %d | %s | %s |\n' "$count" "$sig" "$rc" "$(head -n 1 err.txt)" "$verdict"
done

# Output that cannot be written.
for c in "formats" "finfo --all" "inspect 1.5" "values e4m3" "list" "run footprint" "merge $work/shard_ok.json" \
         "account params=1e9" "regress $work/s_good.yaml" "mma --list"; do
  count=$((count + 1))
  # shellcheck disable=SC2086
  "$lplab" $c > /dev/full 2> err.txt
  rc=$?
  first=$(head -n 1 err.txt | cut -c1-160)
  verdict=refused
  ((rc != 0 && $(wc -l < err.txt) == 1)) || { verdict="PROBLEM: exit $rc"; problems=$((problems + 1)); }
  printf '| %d | `lplab %s > /dev/full` | %d | %s | %s |\n' "$count" "${c//$work\//}" "$rc" "$first" "$verdict"
done

echo
echo "$count cases, $problems problems ($("$lplab" --version 2>&1 | head -n 1))"
((problems == 0))
