// The vector parts of block scaling (scaling.cpp), once per Highway target:
// the largest magnitude of each block, and each block multiplied by its own
// factor. Both are exact operations (a maximum of bit patterns; a product
// that scaling.h's argument shows is rounded the same as the exact quotient),
// so every target gives the same result as the scalar loops they replace.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "block_ops.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "block_ops.h"
#include "hwy/highway.h"
#include "kernel_args.h"

HWY_BEFORE_NAMESPACE();
namespace lplab::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// |x| as bits orders like |x| itself, +inf above every finite value and the
// NaNs above +inf: an unsigned maximum finds amax and any NaN at once.
HWY_ATTR void BlockAbsMaxBits(const float* HWY_RESTRICT x, std::size_t n, std::size_t block,
                              std::uint32_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const std::size_t N = hn::Lanes(du);
  const auto k_abs = hn::Set(du, 0x7FFFFFFFu);
  for (std::size_t b = 0, start = 0; start < n; ++b, start += block) {
    const std::size_t len = std::min(block, n - start);
    const float* p = x + start;
    auto m = hn::Zero(du);
    std::size_t i = 0;
    for (; i + N <= len; i += N) m = hn::Max(m, hn::And(hn::BitCast(du, hn::LoadU(df, p + i)), k_abs));
    std::uint32_t r = hn::GetLane(hn::MaxOfLanes(du, m));
    for (; i < len; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, p + i, sizeof bits);
      r = std::max(r, bits & 0x7FFFFFFFu);
    }
    out[b] = r;
  }
}

HWY_ATTR void ScaleBlocks(const float* HWY_RESTRICT x, std::size_t n, std::size_t block,
                          const float* HWY_RESTRICT factors, float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  for (std::size_t b = 0, start = 0; start < n; ++b, start += block) {
    const std::size_t len = std::min(block, n - start);
    const auto f = hn::Set(df, factors[b]);
    std::size_t i = 0;
    for (; i + N <= len; i += N) hn::StoreU(hn::Mul(hn::LoadU(df, x + start + i), f), df, out + start + i);
    for (; i < len; ++i) out[start + i] = x[start + i] * factors[b];
  }
}

}  // namespace lplab::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lplab::kernels::detail {
HWY_EXPORT(BlockAbsMaxBits);
HWY_EXPORT(ScaleBlocks);

void block_abs_max_bits(const float* x, std::size_t n, std::size_t block, std::uint32_t* out) {
  LPLAB_DISPATCH(BlockAbsMaxBits)(x, n, block, out);
}
void scale_blocks(const float* x, std::size_t n, std::size_t block, const float* factors, float* out) {
  LPLAB_DISPATCH(ScaleBlocks)(x, n, block, factors, out);
}
}  // namespace lplab::kernels::detail
#endif
