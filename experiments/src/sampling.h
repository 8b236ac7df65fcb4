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

namespace lplab::experiments::sampling {

// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a Weyl sequence through a 64-bit bijection.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15u);  // 2^64 / golden ratio
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
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

}  // namespace lplab::experiments::sampling
