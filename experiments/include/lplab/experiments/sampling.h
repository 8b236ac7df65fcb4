// Seeded samples for the experiments: a fixed, portable random stream and
// the normal and log-normal draws built on it.
//
// std::normal_distribution's algorithm is implementation-defined, so its
// numbers differ between standard libraries; these generators give the same
// sample for the same seed everywhere, which the reports' reproducibility
// rests on.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "lplab/kernels/random.h"

namespace lplab::experiments::sampling {

// SplitMix64 (kernels/random.h): a Weyl sequence through a 64-bit bijection.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    const std::uint64_t out = kernels::splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15u;  // the Weyl step splitmix64 adds
    return out;
  }

  // Uniform on (0, 1): the top 53 bits plus half a step, so that 0 (whose
  // logarithm Box-Muller would take) never occurs.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1p-53; }

 private:
  std::uint64_t state_;
};

// n draws of N(0, sigma^2) by the Box-Muller transform (Box & Muller, Ann.
// Math. Statist. 29, 1958), both outputs of each pair used.
inline std::vector<double> normal(std::size_t n, double sigma, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; i += 2) {
    const double r = std::sqrt(-2.0 * std::log(rng.uniform()));
    const double t = 2.0 * std::numbers::pi * rng.uniform();
    x[i] = sigma * r * std::cos(t);
    if (i + 1 < n) x[i + 1] = sigma * r * std::sin(t);
  }
  return x;
}

// n positive draws of sigma * exp(shape * Z), Z ~ N(0, 1): a log-normal with
// median sigma whose logarithm has standard deviation `shape`. Activations
// and gradients spread over decades like this, which a normal cannot show.
inline std::vector<double> lognormal(std::size_t n, double sigma, double shape,
                                     std::uint64_t seed) {
  std::vector<double> x = normal(n, 1.0, seed);
  for (double& v : x) v = sigma * std::exp(shape * v);
  return x;
}

// n draws uniform between low and high: low + (high - low) u with u from
// Rng::uniform, in (0, 1) (the rounding of the sum may reach low or high).
inline std::vector<double> uniform(std::size_t n, double low, double high, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) v = low + (high - low) * rng.uniform();
  return x;
}

// The values as a float tensor, each rounded to nearest-even (what storing a
// double sample in a framework's fp32 tensor does).
inline std::vector<float> to_float(std::span<const double> x) {
  return std::vector<float>(x.begin(), x.end());
}

// A standard normal sample for index i of the stream `stream`: Box-Muller on
// two 53-bit uniforms from splitmix64. Counter-based, so a value depends on
// (seed, stream, i) only, not on the order of a sweep. The matmul_error
// experiment and `lplab regress` matmul checks draw A from stream 2k and B
// from stream 2k + 1 (a check with the experiment's seed and k draws its very
// operands); the training experiment draws its weights and batches.
inline double gaussian(std::uint64_t seed, std::uint64_t stream, std::uint64_t i) {
  const std::uint64_t key = kernels::splitmix64(seed ^ kernels::splitmix64(stream));
  const std::uint64_t r1 = kernels::splitmix64(key + 2 * i);
  const std::uint64_t r2 = kernels::splitmix64(key + 2 * i + 1);
  // u1 in (0, 1]: (r >> 11) + 1 over 2^53, so log(u1) is finite.
  const double u1 = (static_cast<double>(r1 >> 11) + 1.0) * 0x1p-53;
  const double u2 = static_cast<double>(r2 >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// A matmul operand of `count` samples of stream `stream`: N(0, 1), or its
// absolute value where `positive` (the half-normal, all products positive).
inline std::vector<double> matmul_samples(std::uint64_t seed, std::uint64_t stream, std::size_t count,
                                          bool positive) {
  std::vector<double> x(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double g = gaussian(seed, stream, i);
    x[i] = positive ? std::abs(g) : g;
  }
  return x;
}

}  // namespace lplab::experiments::sampling
