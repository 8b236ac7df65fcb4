#!/bin/sh
# The live comparison with MMA-Sim: where the development environment exists
# (a Python with mmasim 2.1.1: LPLAB_MMASIM_PYTHON, else build/mmasim-venv),
# MMA-Sim computes every preset on inputs drawn with a fresh seed, and the
# golden test checks lplab against that file. Elsewhere: SKIPPED (exit 77).
# Usage: mma_live.sh MMA_TEST_BINARY SOURCE_DIR
set -eu
test_binary=$1
source_dir=$2
python=${LPLAB_MMASIM_PYTHON:-$source_dir/build/mmasim-venv/bin/python}
if ! [ -x "$python" ] || ! "$python" -c "import mmasim, numpy" >/dev/null 2>&1; then
  echo "SKIPPED: no MMA-Sim environment ($python with mmasim 2.1.1 and numpy; see scripts/mmasim-goldens.py)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "MMA-Sim live: seed $seed"
"$python" "$source_dir/scripts/mmasim-goldens.py" "$dir/live.bin" --seed "$seed" 2>&1 | grep -v "CUDA_HOME\|UserWarning\|_conversion_method"
LPLAB_MMA_GOLDENS="$dir/live.bin" "$test_binary" --gtest_filter='MmaPresets.match_mmasim_bit_for_bit:MmaPresets.every_preset_has_goldens*'
