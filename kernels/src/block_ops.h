// Vector helpers of block scaling, dispatched like the conversions
// (block_ops.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lplab::kernels::detail {

// out[b] = the largest |x_i| of block b as float bits (NaN bits where the
// block holds a NaN), for the ceil(n / block) blocks of x[0, n).
void block_abs_max_bits(const float* x, std::size_t n, std::size_t block, std::uint32_t* out);

// out_i = x_i * factors[b] for every element i of block b.
void scale_blocks(const float* x, std::size_t n, std::size_t block, const float* factors, float* out);

}  // namespace lplab::kernels::detail
