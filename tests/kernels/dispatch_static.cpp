// A kernel compiled for one target only (HWY_COMPILE_ONLY_STATIC, set for
// this file by tests/CMakeLists.txt), called through LPLAB_DISPATCH: its
// dispatch table has a single entry, which must be the one called whatever
// target the rest of the process runs.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/dispatch_static.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace dispatch_static::HWY_NAMESPACE {
HWY_NOINLINE const char* CompiledTargetName() { return hwy::TargetName(HWY_TARGET); }
}  // namespace dispatch_static::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "dispatch.h"

static_assert((HWY_TARGETS & (HWY_TARGETS - 1)) == 0, "this file must be compiled for one target");

namespace dispatch_static {
HWY_EXPORT(CompiledTargetName);
const char* dispatched_name() { return LPLAB_DISPATCH(CompiledTargetName)(); }
const char* static_name() { return hwy::TargetName(HWY_STATIC_TARGET); }
}  // namespace dispatch_static
#endif
