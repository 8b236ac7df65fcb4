// Bulk conversion between float and the lplab formats, and between any two
// formats, over whole arrays.
//
//   lplab::kernels::convert(std::span<const From> in, std::span<To> out,
//                           Round r = Round::nearest_even, Overflow o = Overflow::ieee,
//                           std::uint64_t seed = 0);
//   lplab::kernels::convert(in, out, const ConvertOptions&);   // stats, threads, index base
//
// Every element is converted exactly as the scalar lplab::convert<To>(x, r, o)
// converts it -- bit for bit, flags included -- and with Round::stochastic
// element i uses the random bits stochastic_bits(seed, i) (random.h).
//
// Errors: spans of different length throw std::invalid_argument before any
// element is written; overflow and NaN are values, never exceptions.
//
// Speed: between float and the formats of the catalog (catalog.h) the work
// runs in lplab's compiled SIMD kernels, chosen at run time for the CPU
// (targets.h); a format -> format conversion goes through float in chunks,
// which is exact because float holds every value of every catalog format
// except float32 itself. Other types (double, formats a user declares) take
// the scalar reference loop, convert_reference, which is what the SIMD
// kernels are proven against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "lplab/formats.h"
#include "lplab/kernels/format_id.h"
#include "lplab/kernels/random.h"

namespace lplab::kernels {

// How many elements raised each flag (policy.h) in one or more conversions.
struct FlagCounts {
  std::uint64_t inexact = 0;
  std::uint64_t underflow = 0;
  std::uint64_t overflow = 0;
  std::uint64_t invalid = 0;

  constexpr void add(Flags f) noexcept {
    inexact += f.inexact();
    underflow += f.underflow();
    overflow += f.overflow();
    invalid += f.invalid();
  }
  constexpr FlagCounts& operator+=(const FlagCounts& o) noexcept {
    inexact += o.inexact;
    underflow += o.underflow;
    overflow += o.overflow;
    invalid += o.invalid;
    return *this;
  }
  friend constexpr bool operator==(const FlagCounts&, const FlagCounts&) = default;
};

struct ConvertOptions {
  Round round = Round::nearest_even;
  Overflow overflow = Overflow::ieee;
  std::uint64_t seed = 0;  // Round::stochastic only
  // When given, the counts of this call are added to *stats. Without it the
  // kernels compute no flags at all.
  FlagCounts* stats = nullptr;
  // Worker threads for large arrays: 1 (the default) runs on the calling
  // thread, 0 uses every core. Results do not depend on it.
  unsigned threads = 1;
  // The index of in[0] for the stochastic random bits, so that a slice of a
  // larger array converts exactly as it would inside the whole.
  std::uint64_t first_index = 0;
};

// The bytes of output from which a call writes it by streaming stores, past
// the caches, as a large memcpy does: three quarters of the largest cache
// (at least 4 MiB). bulk_convert decides on the output of the call; a caller
// that converts a large array a piece at a time (the Python package, for
// Ctrl-C) keeps the streaming by making each piece at least this large.
std::size_t streaming_output_bytes();

// The compiled entry point (library lplab_kernels): codes in, codes out, one
// element of the format's storage type each.
void bulk_convert(FormatId to, FormatId from, const void* in, void* out, std::size_t n,
                  const ConvertOptions& options);

namespace detail {
inline void check_sizes(std::size_t in, std::size_t out) {
  if (in != out)
    throw std::invalid_argument("lplab::kernels::convert: input has " + std::to_string(in) +
                                " elements but output has " + std::to_string(out));
}
}  // namespace detail

// The scalar reference: one lplab::convert per element, in order, on the
// calling thread (options.threads is ignored).
template <Convertible From, Convertible To>
void convert_reference(std::span<const From> in, std::span<To> out,
                       const ConvertOptions& options) {
  detail::check_sizes(in.size(), out.size());
  const std::uint64_t base = options.first_index;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::uint32_t bits =
        options.round == Round::stochastic ? stochastic_bits(options.seed, base + i) : 0;
    if (options.stats != nullptr) {
      Flags f;
      out[i] = lplab::convert<To>(in[i], options.round, options.overflow, &f, bits);
      options.stats->add(f);
    } else {
      out[i] = lplab::convert<To>(in[i], options.round, options.overflow, nullptr, bits);
    }
  }
}

template <Convertible From, Convertible To>
void convert(std::span<const From> in, std::span<To> out, const ConvertOptions& options) {
  detail::check_sizes(in.size(), out.size());
  constexpr auto from = format_id<std::remove_cv_t<From>>;
  constexpr auto to = format_id<std::remove_cv_t<To>>;
  if constexpr (from != FormatId::none && to != FormatId::none) {
    bulk_convert(to, from, in.data(), out.data(), in.size(), options);
  } else {
    convert_reference(in, out, options);
  }
}

template <Convertible From, Convertible To>
void convert(std::span<const From> in, std::span<To> out, Round r = Round::nearest_even,
             Overflow o = Overflow::ieee, std::uint64_t seed = 0) {
  convert(in, out, ConvertOptions{.round = r, .overflow = o, .seed = seed});
}

// Convenience for contiguous containers (std::vector, std::array, ...):
//   std::vector<float> x(n); std::vector<lplab::float8_e4m3fn> y(n);
//   lplab::kernels::convert(x, y);
template <class In, class Out>
  requires(!std::same_as<std::remove_cvref_t<In>, std::span<const std::ranges::range_value_t<In>>>) &&
          std::ranges::contiguous_range<const In> && std::ranges::contiguous_range<Out> &&
          Convertible<std::ranges::range_value_t<In>> && Convertible<std::ranges::range_value_t<Out>>
void convert(const In& in, Out&& out, const ConvertOptions& options) {
  using F = std::ranges::range_value_t<In>;
  using T = std::ranges::range_value_t<Out>;
  convert(std::span<const F>(std::ranges::data(in), std::ranges::size(in)),
          std::span<T>(std::ranges::data(out), std::ranges::size(out)), options);
}
template <class In, class Out>
  requires(!std::same_as<std::remove_cvref_t<In>, std::span<const std::ranges::range_value_t<In>>>) &&
          std::ranges::contiguous_range<const In> && std::ranges::contiguous_range<Out> &&
          Convertible<std::ranges::range_value_t<In>> && Convertible<std::ranges::range_value_t<Out>>
void convert(const In& in, Out&& out, Round r = Round::nearest_even, Overflow o = Overflow::ieee,
             std::uint64_t seed = 0) {
  convert(in, std::forward<Out>(out), ConvertOptions{.round = r, .overflow = o, .seed = seed});
}

}  // namespace lplab::kernels
