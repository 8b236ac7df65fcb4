#!/usr/bin/env bash
# Nothing a user gives lplab is destroyed (issue 42): outputs that alias an
# input (by any spelling: the same name, a symbolic or a hard link) are
# refused before any work; a replaced file keeps its mode; a read-only file
# or one this user may not write is refused; --out's name decides the
# format unless --output says otherwise (and a mismatch is refused); "-" is
# standard output and "" is refused everywhere; a file-size limit is one line
# and leaves nothing behind; stale temporaries lplab can prove are its own
# are removed, and nothing else is.
#
#   bash tests/tool/output_safety.sh LPLAB
#
# Every case prints "ok" or "FAIL"; the last line counts them, and the exit
# status is 1 if any failed.
set -u
lplab=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
chmod 755 "$work"  # another user (below) may reach its files
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1: $2"; }

# refused NAME RC PATTERN CMD...: exit status RC, nothing on stdout, one line
# on stderr matching PATTERN.
refused() {
  local name=$1 want=$2 pattern=$3
  shift 3
  "$@" > out.txt 2> err.txt
  local rc=$?
  if [ "$rc" != "$want" ]; then bad "$name" "exit $rc, expected $want; stderr: $(head -c 300 err.txt)"; return; fi
  if [ -s out.txt ]; then bad "$name" "stdout not empty: $(head -c 200 out.txt)"; return; fi
  if [ "$(wc -l < err.txt)" != 1 ]; then bad "$name" "expected one stderr line, got: $(cat err.txt)"; return; fi
  if ! grep -Eq "^lplab: error: .*$pattern" err.txt; then bad "$name" "stderr '$(cat err.txt)' lacks '$pattern'"; return; fi
  ok "$name"
}
# same NAME FILE SUM: FILE's checksum is still SUM.
same() {
  if [ "$(cksum < "$2")" = "$3" ]; then ok "$1"; else bad "$1" "$2 was changed"; fi
}
sum() { cksum < "$1"; }

# --- the inputs -------------------------------------------------------------
# A float64 .npy of two values (1.0, 2.0), as numpy writes it.
header="{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
pad=$(( 64 - (10 + ${#header} + 1) % 64 ))
{ printf '\223NUMPY\001\000'; printf "\\$(printf %03o $(( ${#header} + pad + 1 )))\\000";
  printf '%s%*s\n' "$header" "$pad" ''; printf '\000\000\000\000\000\000\360\077\000\000\000\000\000\000\000\100'; } > X.npy
cat > S.yaml <<'EOF'
checks:
  - name: grads
    convert: {format: bf16, input: {distribution: normal, n: 100, seed: 1}}
    underflow_fraction: {max: 0.5}
EOF
cat > N.yaml <<'EOF'
checks:
  - name: the user's file in bf16
    convert: {format: bf16, input: X.npy}
    mismatch_fraction: 0
EOF
"$lplab" run footprint --output json --shard 0/2 --out u0.json 2>/dev/null
"$lplab" run footprint --output json --shard 1/2 --out u1.json 2>/dev/null
[ -s u0.json ] && [ -s u1.json ] || { echo "FAIL setup: the shards were not written"; exit 1; }
x=$(sum X.npy); s=$(sum S.yaml); n=$(sum N.yaml); u0=$(sum u0.json)

# --- outputs that are inputs --------------------------------------------------
refused regress_junit_is_spec 2 "an input of this run" "$lplab" regress S.yaml --junit S.yaml
same regress_junit_is_spec.kept S.yaml "$s"
ln -s S.yaml S-link.xml
refused regress_junit_link_to_spec 2 "an input of this run" "$lplab" regress S.yaml --junit S-link.xml
same regress_junit_link_to_spec.kept S.yaml "$s"
ln X.npy X-hard.xml
refused regress_junit_hardlink_to_input 2 "an input of this run" "$lplab" regress N.yaml --junit X-hard.xml
same regress_junit_hardlink_to_input.kept X.npy "$x"
refused regress_junit_yaml_name 2 "JUnit XML" "$lplab" regress S.yaml --junit other.yaml
refused run_out_is_input 2 "" "$lplab" run error --input X.npy --out X.npy
same run_out_is_input.kept X.npy "$x"
ln -s X.npy X-link.json
refused run_out_link_to_input 2 "an input of this run" "$lplab" run error --input X.npy --out X-link.json
same run_out_link_to_input.kept X.npy "$x"
ln X.npy X-hard.json
refused run_out_hardlink_to_input 2 "an input of this run" "$lplab" run error --input X.npy --out X-hard.json
same run_out_hardlink_to_input.kept X.npy "$x"
refused run_out_relative_spelling 2 "an input of this run" "$lplab" run error --input ./X.npy --out "$work/X-hard.json"
refused merge_out_is_shard 2 "an input of this run" "$lplab" merge u0.json u1.json --out u0.json
same merge_out_is_shard.kept u0.json "$u0"
refused merge_out_is_shard_by_path 2 "an input of this run" "$lplab" merge u0.json u1.json --out "$work/./u0.json"
same merge_out_is_shard_by_path.kept u0.json "$u0"

# --- what a replaced file keeps, and what is never replaced -------------------
echo old > private.json
chmod 600 private.json
"$lplab" run footprint --out private.json 2>/dev/null
if [ "$(stat -c %a private.json)" = 600 ] && head -c 1 private.json | grep -q '{'; then ok mode_600_kept
else bad mode_600_kept "mode $(stat -c %a private.json), content $(head -c 20 private.json)"; fi
echo old > target.json; chmod 640 target.json; ln -s target.json via-link.json
"$lplab" run footprint --out via-link.json 2>/dev/null
if [ -L via-link.json ] && [ "$(stat -c %a target.json)" = 640 ] && head -c 1 target.json | grep -q '{'; then ok mode_640_kept_through_link
else bad mode_640_kept_through_link "link $(ls -l via-link.json), mode $(stat -c %a target.json)"; fi
echo protected > ro.txt; chmod 444 ro.txt; r=$(sum ro.txt)
refused read_only_refused 2 "read-only" "$lplab" run footprint --out ro.txt
same read_only_refused.kept ro.txt "$r"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  mkdir shared && chmod 777 shared && echo theirs > shared/theirs.txt && chmod 644 shared/theirs.txt
  t=$(sum shared/theirs.txt)
  refused another_users_file 2 "cannot write to it" setpriv --reuid=65534 --regid=65534 --clear-groups "$lplab" run footprint --out shared/theirs.txt
  same another_users_file.kept shared/theirs.txt "$t"
else
  echo "SKIPPED another_users_file: needs root and setpriv to act as another user"
fi

# --- the format a name asks for -----------------------------------------------
"$lplab" run footprint --out looks.json 2>/dev/null
if head -c 1 looks.json | grep -q '{'; then ok json_by_extension; else bad json_by_extension "$(head -c 40 looks.json)"; fi
"$lplab" run footprint --out looks.csv 2>/dev/null
if head -n 1 looks.csv | grep -q '^# footprint_formats$' && sed -n 2p looks.csv | grep -q ','; then ok csv_by_extension
else bad csv_by_extension "$(head -n 2 looks.csv)"; fi
refused json_name_table_output 2 "--output table" "$lplab" run footprint --out clash.json --output table
[ -e clash.json ] && bad json_name_table_output.nothing "clash.json was written" || ok json_name_table_output.nothing
refused values_csv_name_json_output 2 "a .csv name" "$lplab" values e4m3 --out v.csv --output json

# --- "-" and "" ----------------------------------------------------------------
for cmd in "run footprint" "merge u0.json u1.json" "values e2m1"; do
  # shellcheck disable=SC2086
  "$lplab" $cmd --out - > dash.txt 2> err.txt
  if [ $? = 0 ] && [ -s dash.txt ] && [ ! -e ./- ]; then ok "dash_is_stdout: $cmd"; else bad "dash_is_stdout: $cmd" "$(cat err.txt)"; fi
  # shellcheck disable=SC2086
  refused "empty_out_refused: $cmd" 2 "--out is empty" "$lplab" $cmd --out ''
done
refused empty_junit_refused 2 "--junit is empty" "$lplab" regress S.yaml --junit ''

# --- path errors name their cause -----------------------------------------------
echo file > plain
refused out_under_a_file 2 "plain is a file, not a directory" "$lplab" run footprint --out plain/x.json
long=$(printf 'n%.0s' $(seq 1 305))
refused out_name_too_long 2 "is 310 bytes; a file name has at most 255" "$lplab" run footprint --out "$long.json"
deep=$(printf 'd/%.0s' $(seq 1 2100))
refused out_path_too_long 2 "the path is .* bytes; the system takes at most 4095" "$lplab" run footprint --out "${deep}x.json"
refused input_device 2 "character device, not a regular file" "$lplab" run error --input /dev/urandom
refused input_directory 2 "is a directory" "$lplab" run error --input "$work"
refused spec_device 2 "character device, not a regular file" "$lplab" regress /dev/zero
refused input_under_a_file 2 "plain is a file, not a directory" "$lplab" run error --input plain/x.npy

# --- a file-size limit ------------------------------------------------------------
echo old > limited.json; l=$(sum limited.json)
( ulimit -f 1; "$lplab" values fp16 --out limited.json > out.txt 2> err.txt; echo $? > rc.txt )
if [ "$(cat rc.txt)" = 1 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "file-size limit" err.txt; then ok file_size_limit_one_line
else bad file_size_limit_one_line "exit $(cat rc.txt): $(cat err.txt)"; fi
same file_size_limit.kept limited.json "$l"
if ls -A | grep -q 'lplab-.*\.tmp'; then bad file_size_limit.no_temporary "$(ls -A | grep tmp)"; else ok file_size_limit.no_temporary; fi

# --- stale temporaries: lplab's own removed, nothing else -----------------------------
echo stale > .clean.json.lplab-4194303.tmp   # above Linux's largest PID: no such process
echo live > .clean.json.lplab-1.tmp          # PID 1 runs
echo mine > clean.json.tmp77                 # not lplab's pattern
echo other > .other.json.lplab-4194303.tmp   # another target's
"$lplab" run footprint --out clean.json 2>/dev/null
if [ ! -e .clean.json.lplab-4194303.tmp ] && [ -e .clean.json.lplab-1.tmp ] && [ -e clean.json.tmp77 ] &&
   [ -e .other.json.lplab-4194303.tmp ]; then ok stale_temporaries
else bad stale_temporaries "$(ls -A | tr '\n' ' ')"; fi

# --- help -------------------------------------------------------------------------------
if "$lplab" > out.txt 2>&1 && grep -q "Subcommands" out.txt; then ok bare_lplab_prints_help; else bad bare_lplab_prints_help "$(head -3 out.txt)"; fi
if "$lplab" help run > out.txt 2>&1 && grep -q -- "--input-dtype" out.txt; then ok help_command; else bad help_command "$(head -3 out.txt)"; fi
refused unknown_command_suggests 2 "did you mean 'report'" "$lplab" reprot

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
