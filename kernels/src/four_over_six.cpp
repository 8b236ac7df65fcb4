// Four Over Six over a tensor (four_over_six.h).
#include "lplab/kernels/four_over_six.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "lplab/kernels/scaling.h"

namespace lplab::kernels {

namespace {
std::size_t blocks_for(std::size_t n) { return n / kFourOverSixBlock + (n % kFourOverSixBlock != 0 ? 1 : 0); }

void check_sizes(const FourOverSix& p, std::size_t n, std::size_t elems, std::size_t scales) {
  if (elems != n)
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values but " + std::to_string(elems) +
                                " codes");
  if (scales != blocks_for(n))
    throw std::invalid_argument("four_over_six: " + std::to_string(n) + " values need " +
                                std::to_string(blocks_for(n)) + " scales (one per 16), not " +
                                std::to_string(scales));
  if (!(p.e4m3_max > 0.0f && p.e4m3_max <= 448.0f))
    throw std::invalid_argument("four_over_six: e4m3_max must lie in (0, 448]");
}
}  // namespace

void quantize_four_over_six(const FourOverSix& p, std::span<const float> x, std::span<float4_e2m1fn> elems,
                            std::span<float8_e4m3fn> scales, float* amax, std::size_t* blocks_of_four) {
  // 1. Checked before anything is written.
  check_sizes(p, x.size(), elems.size(), scales.size());
  if (amax == nullptr) throw std::invalid_argument("four_over_six: the amax output is required");
  // 2. The tensor's amax (a NaN anywhere makes it NaN).
  const float a = lplab::kernels::amax(x);  // scaling.h, the SIMD reduction
  // 3. Each block.
  std::size_t fours = 0;
  for (std::size_t b = 0; b < scales.size(); ++b) {
    const std::size_t first = b * kFourOverSixBlock;
    const int n = static_cast<int>(std::min<std::size_t>(kFourOverSixBlock, x.size() - first));
    const FourOverSixBlock r = four_over_six_block(p, x.data() + first, n, a);
    for (int i = 0; i < n; ++i) elems[first + static_cast<std::size_t>(i)] = r.codes[i];
    scales[b] = r.scale;
    fours += r.four;
  }
  *amax = a;
  if (blocks_of_four != nullptr) *blocks_of_four = fours;
}

void dequantize_four_over_six(const FourOverSix& p, std::span<const float4_e2m1fn> elems,
                              std::span<const float8_e4m3fn> scales, float amax, std::span<float> y) {
  check_sizes(p, y.size(), elems.size(), scales.size());
  const float numerator = 6.0f * p.e4m3_max;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float s = static_cast<float>(scales[i / kFourOverSixBlock]);
    y[i] = ((static_cast<float>(elems[i]) * s) * amax) / numerator;
  }
}

}  // namespace lplab::kernels
