#!/usr/bin/env bash
# The layering docs/architecture.md states, checked on the source tree and
# the built artifacts:
#   architecture.sh SOURCE_DIR [ARTIFACT...]
# (the artifacts: the tool and the Python module of an optimised build).
# Prints each violation on one line and exits 1 if there is any.
set -u
src=$1
shift
cd "$src" || exit 2
bad=0
violation() { echo "architecture: $*"; bad=1; }

# 1. No layer names another layer's detail namespace. python/, tools/ and
#    benchmarks/ have none of their own, so any detail:: there is another's;
#    cuda/'s own (lplab::cuda::detail) is what an unqualified detail:: means
#    inside it; experiments/ owns the names listed here.
experiments_own_detail='round_trip|record_elements'
while IFS= read -r hit; do violation "another layer's detail: $hit"; done < <(
  grep -rnE '(^|[^a-z_:])(kernels::detail|lplab::detail|xt::detail)::' python cuda tools benchmarks runtime lab experiments report regress \
    --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh'
  grep -rnE '(^|[^a-z_:])detail::' python/src tools benchmarks --include='*.h' --include='*.cpp' --include='*.cu' |
    grep -vE '(^|[^a-z_:])cuda::detail::'
  grep -rnoE '(^|[^a-z_:])detail::[A-Za-z_]+' lab experiments report regress --include='*.h' --include='*.cpp' |
    grep -vE "detail::($experiments_own_detail)\$")
#    cuda/ includes no private header of kernels/src.
for h in kernels/src/*.h; do
  name=$(basename "$h")
  grep -rln "#include \"$name\"" cuda >/dev/null 2>&1 &&
    violation "cuda/ includes kernels' private $h: $(grep -rln "#include \"$name\"" cuda | tr '\n' ' ')"
done

# 2. No source-tree path in the installed artifacts.
grep -rn 'LPLAB_REGRESSION_DIR' tools python >/dev/null && violation "LPLAB_REGRESSION_DIR is compiled into tools/ or python/"
for artifact in "$@"; do
  [ -f "$artifact" ] || { violation "no such artifact: $artifact"; continue; }
  if readelf -p .rodata "$artifact" 2>/dev/null | grep -qF "$src/"; then
    violation "$artifact carries the source-tree path $src: $(readelf -p .rodata "$artifact" | grep -F "$src/" | head -1)"
  fi
done

# 3. Enumerations are parsed from their tables (formats/enum_table.h), not
#    from names restated in the bindings: no binding spells a value list.
for name in gelu_tanh per_op history_max amax_ratio_te nearest_away mismatch_fraction; do
  grep -rn "\"$name\"" python/src >/dev/null && violation "python/src restates the name \"$name\": parse it with runtime::parse<E>"
done

# 4. Every regression suite has its baseline; every experiment file registers itself.
for suite in $(sed -n 's/^ *X(\([a-z_]*\), ".*/\1/p' regress/include/lplab/regress/golden.h); do
  [ -f "tests/regression/$suite.txt" ] || violation "suite $suite has no tests/regression/$suite.txt"
done
for f in experiments/each/*.cpp; do
  n=$(basename "$f" .cpp)
  grep -q "^Experiment ${n}_experiment()" "$f" || violation "$f does not define ${n}_experiment()"
done

[ $bad = 0 ] && echo "architecture: every check holds"
exit $bad
