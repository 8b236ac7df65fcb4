// Reports which compiled target a dispatch actually reaches, so tests can
// check that forcing a target (targets.h) runs that target's code.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "target_probe.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "dispatch.h"
#include "lplab/kernels/targets.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
HWY_ATTR const char* KernelTargetName() { return hwy::TargetName(HWY_TARGET); }
}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lplab::kernels {
HWY_EXPORT(KernelTargetName);
namespace detail {
const char* dispatched_target_name() { return LPLAB_DISPATCH(KernelTargetName)(); }
}  // namespace detail
}  // namespace lplab::kernels
#endif
