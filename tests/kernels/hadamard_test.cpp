// The random Hadamard transform (hadamard.h) against Transformer Engine's
// reference as transcribed here: its matrix built as TE's test builds it
// (_build_hadamard_matrix: H_1 = [1], H_2n = [[H, H], [H, -H]]), its sign
// vector as nvfp4_tensor.py lists it, and y = x . diag(s) . H . 0.25 in
// exact (double) arithmetic, rounded once to bfloat16.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "lplab/kernels.h"

namespace lplab::testing {
namespace {

using kernels::HadamardOutput;
using kernels::hadamard_rows;

// TE's get_wgrad_sign_vector (nvfp4_tensor.py).
constexpr int kTeSigns[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};

struct Sylvester {
  int h[16][16];
  Sylvester() {
    h[0][0] = 1;
    for (int n = 1; n < 16; n *= 2)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          h[i][j + n] = h[i][j];
          h[i + n][j] = h[i][j];
          h[i + n][j + n] = -h[i][j];
        }
  }
};

TEST(Hadamard, matrix_and_signs_are_te_s) {
  const Sylvester s;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      EXPECT_EQ(kernels::hadamard_negative(i, j), s.h[i][j] < 0) << i << "," << j;
      int dot = 0;  // H . H^T = 16 I
      for (int k = 0; k < 16; ++k) dot += s.h[i][k] * s.h[j][k];
      EXPECT_EQ(dot, i == j ? 16 : 0);
    }
  std::uint16_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= static_cast<std::uint16_t>(kTeSigns[i] < 0 ? 1u << i : 0u);
  EXPECT_EQ(mask, kernels::kTeHadamardSigns);
  EXPECT_EQ(mask, 0xD7E8);
}

// TE's reference for one group, exactly, then bfloat16.
void reference(const float* x, float* y) {
  const Sylvester s;
  for (int j = 0; j < 16; ++j) {
    double sum = 0;
    for (int i = 0; i < 16; ++i) sum += static_cast<double>(x[i]) * kTeSigns[i] * s.h[i][j];
    y[j] = static_cast<float>(bfloat16(sum * 0.25));
  }
}

// bfloat16 samples of N(0, sigma^2), as TE's inputs are bfloat16.
std::vector<float> samples(std::size_t n, double sigma, std::uint64_t seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; i += 2) {
    seed = kernels::splitmix64(seed);
    const double u1 = (static_cast<double>(seed >> 11) + 1) * 0x1p-53;
    seed = kernels::splitmix64(seed);
    const double u2 = static_cast<double>(seed >> 11) * 0x1p-53;
    const double r = sigma * std::sqrt(-2 * std::log(u1));
    v[i] = static_cast<float>(bfloat16(r * std::cos(2 * M_PI * u2)));
    if (i + 1 < n) v[i + 1] = static_cast<float>(bfloat16(r * std::sin(2 * M_PI * u2)));
  }
  return v;
}

TEST(Hadamard, equals_te_s_reference_bit_for_bit) {
  for (double sigma : {1.0, 1e-3, 300.0}) {
    const std::size_t rows = 8, cols = 256;
    const std::vector<float> x = samples(rows * cols, sigma, 11);
    std::vector<float> y(x.size()), want(x.size());
    hadamard_rows(x.data(), rows, cols, y.data());
    for (std::size_t g = 0; g < x.size(); g += 16) reference(&x[g], &want[g]);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(want[i]))
          << "sigma " << sigma << ", element " << i << ": " << y[i] << " vs TE's " << want[i];
    // Every output is a bfloat16 value.
    for (float v : y) ASSERT_EQ(std::bit_cast<std::uint32_t>(v) & 0xFFFFu, 0u);
  }
}

TEST(Hadamard, every_sign_matters) {
  float ones[16], want[16], got[16];
  for (float& v : ones) v = 1.0f;
  reference(ones, want);
  for (int k = 0; k < 16; ++k) {
    kernels::hadamard16(ones, got, static_cast<std::uint16_t>(kernels::kTeHadamardSigns ^ (1u << k)));
    int differ = 0;
    for (int j = 0; j < 16; ++j) differ += got[j] != want[j];
    EXPECT_EQ(differ, 16) << "sign " << k << " flipped must change every output";
  }
}

TEST(Hadamard, inverse_undoes_it_and_amax_spreads) {
  // Exact data (small integers): the inverse of the float32 transform is x.
  std::vector<float> x(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i * 7 % 23) - 11);
  std::vector<float> y(x.size()), back(x.size());
  hadamard_rows(x.data(), 2, 32, y.data(), kernels::kTeHadamardSigns, HadamardOutput::float32);
  hadamard_rows(y.data(), 2, 32, back.data(), kernels::kTeHadamardSigns, HadamardOutput::float32, true);
  EXPECT_EQ(back, x);
  // In place gives the same.
  std::vector<float> same = x;
  hadamard_rows(same.data(), 2, 32, same.data(), kernels::kTeHadamardSigns, HadamardOutput::float32);
  EXPECT_EQ(same, y);
  // An outlier is spread over its group: amax falls to a quarter.
  float spike[16] = {}, out[16];
  spike[5] = 448.0f;
  kernels::hadamard16(spike, out);
  for (float v : out) EXPECT_EQ(std::fabs(v), 112.0f);
  // Orthogonal: the sum of squares is kept (float32, exact data).
  double in2 = 0, out2 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) in2 += x[i] * x[i], out2 += y[i] * y[i];
  EXPECT_EQ(in2, out2);
}

TEST(Hadamard, refuses_rows_that_are_not_groups_of_16) {
  std::vector<float> x(34), y(34, -1.0f);
  EXPECT_THROW(hadamard_rows(x.data(), 2, 17, y.data()), std::invalid_argument);
  EXPECT_EQ(y, std::vector<float>(34, -1.0f));  // nothing written
  EXPECT_NO_THROW(hadamard_rows(nullptr, 0, 16, nullptr));
}

}  // namespace
}  // namespace lplab::testing
