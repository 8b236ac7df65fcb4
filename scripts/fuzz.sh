#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, preset `fuzz`: clang 14 with ASan +
# UBSan, its own tree build/fuzz) and runs each for LPLAB_FUZZ_SECONDS
# (default 20) seconds, two at a time, over a copy of its committed seed
# corpus (fuzz/corpus/<target>, copied to build/fuzz/corpus-work: the
# repository is never written). Committed crash inputs,
# fuzz/regressions/<target>/*, are replayed first.
#
# Exits non-zero with one line naming the target and its crash file when a
# target finds a crash, a leak or a timeout (-timeout=10 s per input) or
# goes over -rss_limit_mb=2048.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${LPLAB_FUZZ_SECONDS:-20}
jobs=$(nproc)
command -v clang++-14 >/dev/null || {
  echo "lplab: fuzzing needs clang++-14 and libclang-rt-14-dev (scripts/install-deps.sh --tests)" >&2
  exit 1
}

# 1. Build. On an AVX2 machine the kernels are compiled for x86-64-v3, which
#    leaves Highway only its AVX2 and AVX-512 targets to build (fuzz/CMakeLists.txt).
#    Without AVX-512 on this CPU the preset leaves its target out as well
#    (LPLAB_ONLY_HOST_SIMD_TARGETS): the fuzzers run here and would never reach it.
arch=""
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then arch="-march=x86-64-v3"; fi
cmake --preset fuzz "-DLPLAB_FUZZ_KERNEL_ARCH=$arch" >/dev/null
cmake --build --preset fuzz -j "$jobs"

targets=(fuzz_number fuzz_npy fuzz_convert fuzz_spec)
for t in "${targets[@]}"; do
  [[ -x build/fuzz/fuzz/$t ]] || { echo "lplab fuzz: build/fuzz/fuzz/$t was not built" >&2; exit 1; }
done
work=build/fuzz/corpus-work
artifacts=build/fuzz/artifacts
logs=build/fuzz/logs
rm -rf "$work" "$artifacts" "$logs"
mkdir -p "$work" "$artifacts" "$logs"

# The one line a failing target gets: its name, the input that failed, the log.
report() {  # target, log
  local crash
  crash=$(ls -t "$artifacts/$1"/* 2>/dev/null | head -n 1 || true)
  echo "lplab fuzz: $1 failed on ${crash:-an input it did not save} (log: $2)" >&2
}

# 2. Regressions: every committed crash input, once each.
for t in "${targets[@]}"; do
  dir=fuzz/regressions/$t
  [[ -d $dir ]] && compgen -G "$dir/*" >/dev/null || continue
  mkdir -p "$artifacts/$t"
  if ! build/fuzz/fuzz/$t -artifact_prefix="$artifacts/$t/" "$dir"/* >"$logs/$t-regressions.log" 2>&1; then
    echo "lplab fuzz: $t fails a committed regression input in $dir (log: $logs/$t-regressions.log)" >&2
    exit 1
  fi
done

# 3. Fuzzing, two targets at a time (the CI machine has two cores).
run() {  # target
  local t=$1
  mkdir -p "$artifacts/$t"
  cp -r "fuzz/corpus/$t" "$work/$t"
  build/fuzz/fuzz/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/$t/" -print_final_stats=1 "$work/$t" >"$logs/$t.log" 2>&1
}
status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pids=()
  batch=("${targets[@]:i:2}")
  for t in "${batch[@]}"; do
    echo "== fuzzing $t for ${seconds} s"
    run "$t" &
    pids+=($!)
  done
  for k in "${!batch[@]}"; do
    if ! wait "${pids[$k]}"; then
      report "${batch[$k]}" "$logs/${batch[$k]}.log"
      status=1
    fi
  done
done
if [[ $status == 0 ]]; then
  for t in "${targets[@]}"; do
    echo "$t: $(grep -E '^stat::number_of_executed_units' "$logs/$t.log" | awk '{print $2}') inputs, no failure"
  done
fi
exit $status
