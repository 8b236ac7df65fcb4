// The operand types of the matrix units (mma.h's MmaType): each type's
// constants from the format core's finfo of its lplab format, and codes
// decoded and encoded through that format. The presets that use them are
// mma.cpp's tables.
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>
#include <algorithm>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/formats/finfo.h"
#include "lplab/kernels/double_bits.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/mma.h"

namespace lplab::kernels {
namespace {
// ---------------------------------------------------------------------------
// 1. Types.

// The lplab format of a narrow type's values (f16 to ue4m3), given to f as
// std::type_identity<T>: the one map from the ISAs' types to the catalog,
// which the types' constants, decoding and encoding share. (f64, f32 and
// tf32 are not formats here.)
template <class F>
constexpr auto visit_format(MmaType t, F&& f) {
  switch (t) {
    case MmaType::f16: return f(std::type_identity<float16>{});
    case MmaType::bf16: return f(std::type_identity<bfloat16>{});
    case MmaType::e4m3: return f(std::type_identity<float8_e4m3fn>{});
    case MmaType::e5m2: return f(std::type_identity<float8_e5m2>{});
    case MmaType::e3m2: return f(std::type_identity<float6_e3m2fn>{});
    case MmaType::e2m3: return f(std::type_identity<float6_e2m3fn>{});
    case MmaType::e2m1: return f(std::type_identity<float4_e2m1fn>{});
    case MmaType::fp8: return f(std::type_identity<float8_e4m3fnuz>{});
    case MmaType::bf8: return f(std::type_identity<float8_e5m2fnuz>{});
    case MmaType::ue8m0: return f(std::type_identity<float8_e8m0fnu>{});
    case MmaType::ue4m3: return f(std::type_identity<float8_e4m3fn>{});  // unsigned: its sign bit is ignored
    default: break;
  }
  throw std::invalid_argument("mma.cpp: " + std::string(enum_name(t)) + " is not a narrow type");
}

// A type's constants from its format's finfo: a code is a T (Float<D> is the
// size of its code), finfo::bits wide, and its smallest normal exponent is
// finfo::minexp.
template <class T>
constexpr MmaTypeInfo info_of(MmaType t) {
  return {.name = enum_name(t), .bytes = static_cast<int>(sizeof(T)), .bits = finfo<T>::bits,
          .emin = finfo<T>::minexp};
}

constexpr MmaTypeInfo type_info(MmaType t) {
  switch (t) {
    case MmaType::none: return {.name = enum_name(t), .bytes = 0, .bits = 0, .emin = 0};
    // double, natively (mma_decode): numeric_limits' min_exponent counts
    // significands in [0.5, 1), so the smallest normal is 2^(min_exponent - 1).
    case MmaType::f64:
      return {.name = enum_name(t), .bytes = static_cast<int>(sizeof(double)),
              .bits = static_cast<int>(8 * sizeof(double)), .emin = std::numeric_limits<double>::min_exponent - 1};
    // tf32 is an fp32 code (its low 13 bits ignored) with fp32's exponent range.
    case MmaType::f32:
    case MmaType::tf32: return info_of<float32>(t);
    default: return visit_format(t, [t](auto tag) { return info_of<typename decltype(tag)::type>(t); });
  }
}

// Every type's constants, indexed by the enumeration (mma_type_info).
constexpr auto kTypes = [] {
  std::array<MmaTypeInfo, enum_count<MmaType>()> all{};
  for (const EnumEntry<MmaType>& e : enum_entries<MmaType>())
    all[static_cast<std::size_t>(e.value)] = type_info(e.value);
  return all;
}();

// The derived constants against the types' specifications, written out:
// bytes, bits, emin = 1 - bias (IEEE 754-2019 Table 3.5; OFP8 rev 1.0; OCP MX
// v1.0 section 5.3/5.4; the fnuz formats' bias is one larger).
constexpr bool has(MmaType t, int bytes, int bits, int emin) {
  const MmaTypeInfo& i = kTypes[static_cast<std::size_t>(t)];
  return i.bytes == bytes && i.bits == bits && i.emin == emin;
}
static_assert(has(MmaType::none, 0, 0, 0));
static_assert(has(MmaType::f64, 8, 64, -1022));   // bias 1023
static_assert(has(MmaType::f32, 4, 32, -126));    // bias 127
static_assert(has(MmaType::tf32, 4, 32, -126));   // fp32's code and range
static_assert(has(MmaType::f16, 2, 16, -14));     // bias 15
static_assert(has(MmaType::bf16, 2, 16, -126));   // bias 127
static_assert(has(MmaType::e4m3, 1, 8, -6));      // bias 7
static_assert(has(MmaType::e5m2, 1, 8, -14));     // bias 15
static_assert(has(MmaType::e3m2, 1, 6, -2));      // bias 3, one per byte
static_assert(has(MmaType::e2m3, 1, 6, 0));       // bias 1
static_assert(has(MmaType::e2m1, 1, 4, 0));       // bias 1
static_assert(has(MmaType::fp8, 1, 8, -7));       // E4M3FNUZ: bias 8
static_assert(has(MmaType::bf8, 1, 8, -15));      // E5M2FNUZ: bias 16
static_assert(has(MmaType::ue8m0, 1, 8, -127));   // bias 127, no subnormals: code 0 is 2^-127
static_assert(has(MmaType::ue4m3, 1, 8, -6));     // E4M3's, the sign bit ignored

// The low bits of an fp32 code that tf32 drops: fp32's 23 mantissa bits less
// tf32's 10 (1 + 8 + 10 = 19 bits kept).
constexpr std::uint32_t kTf32Dropped = (std::uint32_t{1} << (finfo<float32>::mantissa_bits - 10)) - 1;
static_assert(kTf32Dropped == 0x1FFF);

}  // namespace

const MmaTypeInfo& mma_type_info(MmaType t) { return kTypes[static_cast<std::size_t>(t)]; }

std::string_view mma_format_name(MmaType t) {
  if (t == MmaType::none || t == MmaType::f64 || t == MmaType::f32 || t == MmaType::tf32) return {};
  return visit_format(t, [](auto tag) { return std::string_view(finfo<typename decltype(tag)::type>::name); });
}

MmaType mma_type(std::string_view name) { return enum_parse<MmaType>(name).value_or(MmaType::none); }

double mma_decode(MmaType t, std::uint64_t code) {
  switch (t) {
    case MmaType::f64: return lplab::detail::bit_cast<double>(code);
    case MmaType::f32: return lplab::detail::bit_cast<float>(static_cast<std::uint32_t>(code));
    case MmaType::tf32: return lplab::detail::bit_cast<float>(static_cast<std::uint32_t>(code) & ~kTf32Dropped);
    case MmaType::none: throw std::invalid_argument("mma_decode: no type");
    default: break;
  }
  // fp6/fp4 codes sit in a byte's low bits; ue4m3's sign bit, its top bit, is ignored.
  const int bits = mma_type_info(t).bits - (t == MmaType::ue4m3 ? 1 : 0);
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  return visit_format(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(T::from_bits(code & mask));
  });
}

std::optional<std::uint64_t> mma_code(MmaType t, double v) {
  const bool nan = v != v;
  switch (t) {
    case MmaType::f64: return lplab::detail::bit_cast<std::uint64_t>(v);
    case MmaType::f32:
    case MmaType::tf32: {
      const auto f = static_cast<float>(v);
      const std::uint32_t code = lplab::detail::bit_cast<std::uint32_t>(f);
      if (!nan && (static_cast<double>(f) != v || (t == MmaType::tf32 && (code & kTf32Dropped) != 0)))
        return std::nullopt;
      return code;
    }
    case MmaType::none: return std::nullopt;
    default: break;
  }
  if (t == MmaType::ue4m3 && !(v >= 0)) return std::nullopt;
  const std::uint64_t code = visit_format(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<std::uint64_t>(convert<T>(v, Round::nearest_even, Overflow::ieee).bits());
  });
  const double back = mma_decode(t, code);
  if (back == v || (back != back && nan)) return code;
  return std::nullopt;
}

bool mma_holds(MmaType t, double v) { return mma_code(t, v).has_value(); }

std::size_t mma_first_not_held(MmaType t, std::span<const float> x) {
  const auto scalar_from = [&](std::size_t first) {
    for (std::size_t q = first; q < x.size(); ++q)
      if (!mma_holds(t, static_cast<double>(x[q]))) return q;
    return x.size();
  };
  if (t == MmaType::f32 || t == MmaType::f64) return x.size();  // every float
  if (t == MmaType::none || t == MmaType::tf32) return scalar_from(0);
  // Each value to the type (nearest even) and back: a value the type holds
  // comes back with its own bits (NaN: a NaN, where the type has one).
  return visit_format(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr std::size_t kChunk = 4096;
    std::vector<T> codes(std::min(kChunk, x.size()));
    std::vector<float> back(codes.size());
    for (std::size_t first = 0; first < x.size(); first += kChunk) {
      const std::size_t n = std::min(kChunk, x.size() - first);
      const std::span<const float> in = x.subspan(first, n);
      convert(in, std::span<T>(codes.data(), n), Round::nearest_even, Overflow::ieee);
      convert(std::span<const T>(codes.data(), n), std::span<float>(back.data(), n));
      // Every value of the chunk checked without a branch (a loop the
      // compiler vectorises); the first one not held found only if any.
      // (On the bits: 0/1 in uint32 lanes, an AND reduction.)
      const std::uint32_t unsigned_type = t == MmaType::ue4m3;
      std::uint32_t all_held = 1;
      for (std::size_t q = 0; q < n; ++q) {
        const std::uint32_t u = lplab::detail::bit_cast<std::uint32_t>(in[q]);
        const std::uint32_t w = lplab::detail::bit_cast<std::uint32_t>(back[q]);
        const std::uint32_t mag = u & 0x7FFFFFFFu;
        const std::uint32_t nan = mag > 0x7F800000u, back_nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
        const std::uint32_t zeros = ((u | w) & 0x7FFFFFFFu) == 0;  // +0 and -0 alike
        const std::uint32_t same = (nan & back_nan) | ((1u - nan) & ((u == w) | zeros));
        const std::uint32_t negative = (u >> 31) & (mag != 0);  // -0 is held
        all_held &= same & (1u - (unsigned_type & (negative | nan)));
      }
      if (!all_held) return scalar_from(first);
    }
    return x.size();
  });
}

std::uint64_t mma_encode(MmaType t, double v) {
  const bool nan = double_bits::is_nan(v);
  switch (t) {
    case MmaType::f64: return lplab::detail::bit_cast<std::uint64_t>(v);
    case MmaType::f16: return nan ? 0x7FFF : convert<float16>(v, Round::nearest_even).bits();
    case MmaType::f32: return nan ? 0x7FFFFFFFu : lplab::detail::bit_cast<std::uint32_t>(static_cast<float>(v));
    default: break;
  }
  throw std::invalid_argument("mma_encode: D is f64, f32 or f16");
}

}  // namespace lplab::kernels
