// Interop: Eigen matrices of lplab types, operator<< and {fmt}, and the
// bit-for-bit casts to and from CUDA's own types.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <sstream>

#include "lplab/formats.h"
#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include "lplab/formats/cuda.h"
#endif
#include "lplab/formats/eigen.h"
#include "lplab/formats/fmt.h"

namespace lplab {
namespace {

TEST(Eigen, bfloat16_matrix_product_rounds_each_operation) {
  using M = Eigen::Matrix<bfloat16, 2, 2>;
  M a, b;
  a << bfloat16(1.0f), bfloat16(2.0f), bfloat16(3.0f), bfloat16(4.0f);
  b << bfloat16(0.5f), bfloat16(0.25f), bfloat16(1.0f / 3), bfloat16(256.0f);
  const M c = a * b;
  // Reference: the same dot products with each * and + rounded to bf16.
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const bfloat16 want = a(i, 0) * b(0, j) + a(i, 1) * b(1, j);
      EXPECT_EQ(c(i, j).bits(), want.bits()) << i << "," << j;
    }
  // 0.5 + 2 * bf16(1/3) = 1.16796875 needs 9 bits: the bf16 sum is 1.171875.
  EXPECT_EQ(static_cast<float>(c(0, 0)), 1.171875f);
  // 2 * 256 + 1 * 0.25 = 512.25 is not a bfloat16: rounds to 512.
  EXPECT_EQ(static_cast<float>(c(0, 1)), 512.0f);
  EXPECT_EQ(Eigen::NumTraits<bfloat16>::epsilon().bits(), bfloat16(0.0078125f).bits());
  EXPECT_EQ(static_cast<float>(Eigen::NumTraits<float8_e4m3fn>::highest()), 448.0f);
}

TEST(Eigen, casts_between_matrix_types) {
  Eigen::Matrix<float, 3, 1> v(1e-8f, 70000.0f, 0.1f);
  const Eigen::Matrix<float16, 3, 1> h = v.cast<float16>();
  EXPECT_EQ(h(0).bits(), 0x0000);  // fp16 underflows 1e-8
  EXPECT_EQ(h(1).bits(), 0x7C00);  // and overflows 70000
  EXPECT_EQ(h(2).bits(), 0x2E66);
}

TEST(Text, ostream_and_fmt_print_exact_values) {
  std::ostringstream s;
  s << float8_e4m3fn(448.0f) << " " << bfloat16(0.1f) << " " << float16(-0.0f) << " "
    << float8_e4m3fn(1000.0f) << " " << float8_e5m2(1e6f);
  EXPECT_EQ(s.str(), "448 0.10009765625 -0 nan inf");
  EXPECT_EQ(fmt::format("{}", float16(65504.0f)), "65504");
  EXPECT_EQ(fmt::format("{:.3e}", bfloat16(3.14159f)), "3.141e+00");
  EXPECT_EQ(fmt::format("{}", float8_e4m3fnuz::from_bits(0x80)), "nan");
}

#if LPLAB_HAVE_CUDA_ORACLE
TEST(Cuda, casts_are_bit_for_bit_for_every_code) {
  for (unsigned c = 0; c < 65536; ++c) {
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float16::from_bits(c))).bits(), c);
    EXPECT_EQ(__half_as_ushort(cuda::to_cuda(float16::from_bits(c))), c);
    EXPECT_EQ(__bfloat16_as_ushort(cuda::to_cuda(bfloat16::from_bits(c))), c);
  }
  for (unsigned c = 0; c < 256; ++c) {
    EXPECT_EQ(cuda::to_cuda(float8_e4m3fn::from_bits(c)).__x, c);
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float8_e5m2::from_bits(c))).bits(), c);
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float8_e8m0fnu::from_bits(c))).bits(), c);
  }
  for (unsigned c = 0; c < 64; ++c) {
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float6_e2m3fn::from_bits(c))).bits(), c);
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float6_e3m2fn::from_bits(c))).bits(), c);
  }
  for (unsigned c = 0; c < 16; ++c)
    EXPECT_EQ(cuda::from_cuda(cuda::to_cuda(float4_e2m1fn::from_bits(c))).bits(), c);
  // The value survives too: CUDA's own conversion of the cast value.
  EXPECT_EQ(static_cast<float>(cuda::to_cuda(float8_e4m3fn(448.0f))), 448.0f);
  EXPECT_EQ(__half2float(cuda::to_cuda(float16(0.1f))), static_cast<float>(float16(0.1f)));
}
#endif  // LPLAB_HAVE_CUDA_ORACLE

}  // namespace
}  // namespace lplab
