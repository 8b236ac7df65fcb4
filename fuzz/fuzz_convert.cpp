// libFuzzer target: conversion invariants of every catalog format
// (formats/include/lplab/formats/catalog.h) and the bulk kernels.
//
// The input chooses a format, a rounding, an overflow policy, a SIMD target,
// a seed and a first index, then an array of float or double values (their
// raw bits, so NaN payloads, subnormals and infinities all come up).
// Invariants, for every element x with its random bits R (stochastic_bits
// of the seed and index, as the bulk kernels use them):
//   1. in range: no code has bits above the format's width, and saturate
//      never gives an infinity, nor a NaN for a number the format can
//      approach (policy.h, Overflow::saturate; E8M0 makes 0 and negatives NaN);
//   2. idempotent: c = convert<F>(x); re-encoding decode(c) gives c again
//      (any NaN stays a NaN), under the same policy and bits;
//   3. monotonic, under a deterministic rounding: x <= y implies
//      value(conv(x)) <= value(conv(y)) wherever neither result is NaN;
//   4. bulk = scalar: lplab::kernels::convert over the whole array, on the
//      chosen SIMD target, equals the element-wise lplab::convert bit for bit
//      with the same flag counts (convert.h), and so does decoding the codes
//      back to float.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/targets.h"

namespace lk = lplab::kernels;

namespace {

[[noreturn]] void violated(const char* format, const char* what, std::size_t i) {
  std::fprintf(stderr, "fuzz_convert: %s: %s (element %zu)\n", format, what, i);
  std::abort();
}

struct Policy {
  lplab::Round round;
  lplab::Overflow overflow;
  std::uint64_t seed;
  std::uint64_t first_index;
};

template <class F, class X>
void check_format(const std::vector<X>& xs, const std::vector<float>& floats, const Policy& p) {
  using L = lplab::detail::Layout<F::descriptor>;
  const char* name = F::descriptor.name.c_str();
  const bool stochastic = p.round == lplab::Round::stochastic;
  const auto bits_of = [&](std::size_t i) -> std::uint32_t {
    return stochastic ? lk::stochastic_bits(p.seed, p.first_index + i) : 0;
  };
  std::vector<F> codes(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const X x = xs[i];
    const F c = lplab::convert<F>(x, p.round, p.overflow, nullptr, bits_of(i));
    codes[i] = c;
    // 1. In range.
    if ((c.bits() & ~(L::sign_mask | L::mag_mask)) != 0) violated(name, "code has bits above the width", i);
    if (p.overflow == lplab::Overflow::saturate && !(x != x)) {
      if (lplab::isinf(c)) violated(name, "saturate gave an infinity", i);
      // NaN only where x has no value in the format: E8M0 has no zero and
      // no sign (round.h, pack_zero).
      if (L::has_zero && F::descriptor.is_signed && lplab::isnan(c))
        violated(name, "saturate gave a NaN for a number", i);
    }
    // 2. Idempotent.
    const double v = lplab::convert<double>(c);
    const F again = lplab::convert<F>(v, p.round, p.overflow, nullptr, bits_of(i));
    if (lplab::isnan(c) ? !lplab::isnan(again) : again.bits() != c.bits())
      violated(name, "decode then encode changed the code", i);
  }
  // 3. Monotonic, over neighbouring elements (not wrap-around into an
  // integer, which keeps low bits).
  const bool wraps = p.overflow == lplab::Overflow::wrap && F::descriptor.encoding == lplab::Encoding::integer;
  if (!stochastic && !wraps) {
    for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
      const X a = xs[i], b = xs[i + 1];
      if (a != a || b != b || lplab::isnan(codes[i]) || lplab::isnan(codes[i + 1])) continue;
      const double ca = lplab::convert<double>(codes[i]), cb = lplab::convert<double>(codes[i + 1]);
      if ((a <= b && !(ca <= cb)) || (b <= a && !(cb <= ca))) violated(name, "not monotonic", i);
    }
  }
  // 4. Bulk = scalar, from float, on the chosen target.
  std::vector<F> bulk(floats.size()), scalar(floats.size());
  lk::FlagCounts bulk_flags, scalar_flags;
  lk::ConvertOptions o{.round = p.round, .overflow = p.overflow, .seed = p.seed, .first_index = p.first_index};
  o.stats = &bulk_flags;
  lk::convert(std::span<const float>(floats), std::span<F>(bulk), o);
  o.stats = &scalar_flags;
  lk::convert_reference(std::span<const float>(floats), std::span<F>(scalar), o);
  for (std::size_t i = 0; i < floats.size(); ++i) {
    if ((bulk[i].bits() & ~(L::sign_mask | L::mag_mask)) != 0) violated(name, "bulk code has bits above the width", i);
    if (bulk[i].bits() != scalar[i].bits()) violated(name, "bulk encode differs from scalar", i);
  }
  if (!(bulk_flags == scalar_flags)) violated(name, "bulk flag counts differ from scalar", 0);
  std::vector<float> back_bulk(bulk.size()), back_scalar(bulk.size());
  lk::convert(std::span<const F>(bulk), std::span<float>(back_bulk), lk::ConvertOptions{});
  for (std::size_t i = 0; i < bulk.size(); ++i) back_scalar[i] = lplab::convert<float>(bulk[i]);
  for (std::size_t i = 0; i < bulk.size(); ++i)
    if (lplab::detail::bit_cast<std::uint32_t>(back_bulk[i]) != lplab::detail::bit_cast<std::uint32_t>(back_scalar[i]))
      violated(name, "bulk decode differs from scalar", i);
}

template <class X, class... F>
void dispatch(std::size_t which, const std::vector<X>& xs, const std::vector<float>& floats, const Policy& p,
              lplab::FormatList<F...>) {
  std::size_t k = 0;
  ((k++ == which ? check_format<F>(xs, floats, p) : void()), ...);
}

constexpr std::size_t format_count = lplab::all_formats::size;  // the integers included

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // 1. The choices: format, policies, SIMD target, source type, seed, index.
  const std::size_t format = in.ConsumeIntegralInRange<std::size_t>(0, format_count - 1);
  const Policy p{
      .round = static_cast<lplab::Round>(in.ConsumeIntegralInRange<int>(0, 5)),  // Round's six values
      // (ieee, saturate, wrap: wrap is ieee into a floating-point format.)
      .overflow = static_cast<lplab::Overflow>(in.ConsumeIntegralInRange<int>(0, 2)),
      .seed = in.ConsumeIntegral<std::uint64_t>(),
      .first_index = in.ConsumeIntegralInRange<std::uint64_t>(0, std::uint64_t{1} << 40),
  };
  static const std::vector<lk::SimdTarget> targets = lk::simd_targets();
  const std::size_t target = in.ConsumeIntegralInRange<std::size_t>(0, targets.size() - 1);
  const bool from_double = in.ConsumeBool();
  // 2. The values, raw bits; the bulk array is the same values as float.
  std::vector<float> floats;
  std::vector<double> doubles;
  while (in.remaining_bytes() >= (from_double ? 8u : 4u) && floats.size() < 4096) {
    if (from_double) {
      doubles.push_back(lplab::detail::bit_cast<double>(in.ConsumeIntegral<std::uint64_t>()));
      floats.push_back(static_cast<float>(doubles.back()));
    } else {
      floats.push_back(lplab::detail::bit_cast<float>(in.ConsumeIntegral<std::uint32_t>()));
    }
  }
  lk::ScopedSimdTarget pin(targets[target].id);
  if (from_double) dispatch(format, doubles, floats, p, lplab::all_formats{});
  else dispatch(format, floats, floats, p, lplab::all_formats{});
  return 0;
}
