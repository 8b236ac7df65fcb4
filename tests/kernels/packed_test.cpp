// Packed FP4/FP6 storage: golden bytes, round trips over every code, partial
// groups that never touch a byte past their end, and quantize_packed against
// convert + pack.
#include "lplab/kernels/packed.h"

#include <gtest/gtest.h>
#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include <cuda_fp4.h>
#endif

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/typed.h"

namespace lplab::kernels {
namespace {

static_assert(is_packed_format_v<float4_e2m1fn> && PackedFormat<float4_e2m1fn>);
static_assert(is_packed_format_v<float6_e2m3fn> && is_packed_format_v<float6_e3m2fn>);
static_assert(!is_packed_format_v<float8_e4m3fn> && !is_packed_format_v<float8_e8m0fnu>);
static_assert(!is_packed_format_v<float> && !is_packed_format_v<float16>);

// ceil(n / 2), ceil(3n / 4), n * sizeof.
static_assert(packed_bytes<float4_e2m1fn>(0) == 0 && packed_bytes<float4_e2m1fn>(1) == 1 &&
              packed_bytes<float4_e2m1fn>(2) == 1 && packed_bytes<float4_e2m1fn>(3) == 2 &&
              packed_bytes<float4_e2m1fn>(33) == 17);
static_assert(packed_bytes<float6_e2m3fn>(1) == 1 && packed_bytes<float6_e2m3fn>(2) == 2 &&
              packed_bytes<float6_e2m3fn>(3) == 3 && packed_bytes<float6_e2m3fn>(4) == 3 &&
              packed_bytes<float6_e2m3fn>(5) == 4 && packed_bytes<float6_e3m2fn>(32) == 24);
static_assert(packed_bytes<float8_e4m3fn>(5) == 5 && packed_bytes<float16>(5) == 10 &&
              packed_bytes<float>(3) == 12);

template <class T>
std::vector<T> codes_of(std::initializer_list<unsigned> c) {
  std::vector<T> v;
  for (unsigned b : c) v.push_back(T::from_bits(b));
  return v;
}

template <class T>
std::vector<std::uint8_t> packed_of(const std::vector<T>& codes) {
  std::vector<std::uint8_t> bytes(packed_bytes<T>(codes.size()));
  pack(std::span<const T>(codes), std::span<std::uint8_t>(bytes));
  return bytes;
}

using Bytes = std::vector<std::uint8_t>;

TEST(Packed, fp4_golden_low_nibble_first) {
  // Element 0 in bits 3..0, element 1 in bits 7..4: {0x1, 0x7} -> 0x71.
  EXPECT_EQ(packed_of(codes_of<float4_e2m1fn>({0x1, 0x7})), Bytes{0x71});
  // A partial last pair: the high nibble is zero padding.
  EXPECT_EQ(packed_of(codes_of<float4_e2m1fn>({0x1, 0x7, 0xF})), (Bytes{0x71, 0x0F}));
  EXPECT_EQ(packed_of(codes_of<float4_e2m1fn>({0x8})), Bytes{0x08});  // -0
}

#if LPLAB_HAVE_CUDA_ORACLE
TEST(Packed, fp4_pairs_match_cuda_fp4x2) {
  // CUDA's __nv_cvt_float2_to_fp4x2 (cuda_fp4.h) puts .x in the low nibble and
  // .y in the high one: every pair of codes packs to the byte CUDA produces.
  for (unsigned a = 0; a < 16; ++a) {
    for (unsigned b = 0; b < 16; ++b) {
      const std::vector<float4_e2m1fn> pair = {float4_e2m1fn::from_bits(a),
                                               float4_e2m1fn::from_bits(b)};
      const float2 v{static_cast<float>(pair[0]), static_cast<float>(pair[1])};
      const auto cuda =
          static_cast<std::uint8_t>(__nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest));
      ASSERT_EQ(packed_of(pair), Bytes{cuda}) << a << ", " << b;
    }
  }
}
#endif  // LPLAB_HAVE_CUDA_ORACLE

TEST(Packed, fp6_golden_little_endian_word) {
  // word = 0x01 | 0x02 << 6 | 0x03 << 12 | 0x3F << 18 = 0xFC3081, stored low byte first.
  EXPECT_EQ(packed_of(codes_of<float6_e2m3fn>({0x01, 0x02, 0x03, 0x3F})),
            (Bytes{0x81, 0x30, 0xFC}));
  // 0x2A = 0b101010, 0x15 = 0b010101: word 0b010101'101010'010101'101010 = 0x56A56A.
  EXPECT_EQ(packed_of(codes_of<float6_e3m2fn>({0x2A, 0x15, 0x2A, 0x15})),
            (Bytes{0x6A, 0xA5, 0x56}));
  // Partial groups: 1, 2, 3 codes take 1, 2, 3 bytes, the unused bits zero.
  EXPECT_EQ(packed_of(codes_of<float6_e2m3fn>({0x3F})), Bytes{0x3F});
  EXPECT_EQ(packed_of(codes_of<float6_e2m3fn>({0x3F, 0x3F})), (Bytes{0xFF, 0x0F}));
  EXPECT_EQ(packed_of(codes_of<float6_e2m3fn>({0x3F, 0x3F, 0x3F})), (Bytes{0xFF, 0xFF, 0x03}));
  // A full group followed by a partial one.
  EXPECT_EQ(packed_of(codes_of<float6_e2m3fn>({0x01, 0x02, 0x03, 0x3F, 0x21})),
            (Bytes{0x81, 0x30, 0xFC, 0x21}));
}

template <class T>
class PackedTest : public ::testing::Test {};
using PackedFormats = ::testing::Types<float4_e2m1fn, float6_e2m3fn, float6_e3m2fn>;
TYPED_TEST_SUITE(PackedTest, PackedFormats, lplab::testing::FormatNames);

// The layout stated bit by bit, independently of pack: element i occupies
// bits [w*i, w*i + w) of the little-endian bit stream.
template <class T>
Bytes bit_stream(const std::vector<T>& codes) {
  constexpr int w = finfo<T>::bits;
  Bytes out((codes.size() * w + 7) / 8, 0);
  for (std::size_t i = 0; i < codes.size(); ++i)
    for (int k = 0; k < w; ++k)
      if ((codes[i].bits() >> k) & 1) {
        const std::size_t bit = i * w + static_cast<std::size_t>(k);
        out[bit / 8] = static_cast<std::uint8_t>(out[bit / 8] | (1u << (bit % 8)));
      }
  return out;
}

TYPED_TEST(PackedTest, every_code_in_every_position_round_trips) {
  using T = TypeParam;
  constexpr unsigned count = 1u << finfo<T>::bits;
  // Code c at positions 4c .. 4c+3: every code in every slot of an FP6 group
  // and both nibbles of an FP4 byte.
  std::vector<T> codes;
  for (unsigned c = 0; c < count; ++c)
    for (int r = 0; r < 4; ++r) codes.push_back(T::from_bits(c));
  const Bytes bytes = packed_of(codes);
  EXPECT_EQ(bytes, bit_stream(codes));
  std::vector<T> back(codes.size());
  unpack(std::span<const std::uint8_t>(bytes), std::span<T>(back));
  for (std::size_t i = 0; i < codes.size(); ++i) ASSERT_EQ(back[i].bits(), codes[i].bits()) << i;
}

TYPED_TEST(PackedTest, every_byte_pattern_unpacks_and_repacks) {
  using T = TypeParam;
  // One full group of bytes with every value in each byte position.
  constexpr std::size_t group_bytes = finfo<T>::bits == 4 ? 1 : 3;
  constexpr std::size_t group_codes = finfo<T>::bits == 4 ? 2 : 4;
  for (std::size_t pos = 0; pos < group_bytes; ++pos) {
    for (unsigned v = 0; v < 256; ++v) {
      Bytes bytes(group_bytes, 0x5A);
      bytes[pos] = static_cast<std::uint8_t>(v);
      std::vector<T> codes(group_codes);
      unpack(std::span<const std::uint8_t>(bytes), std::span<T>(codes));
      ASSERT_EQ(packed_of(codes), bytes) << "byte " << pos << " = " << v;
    }
  }
}

TYPED_TEST(PackedTest, odd_lengths_touch_only_their_bytes) {
  using T = TypeParam;
  std::mt19937 rng(7);
  for (std::size_t n = 1; n <= 9; ++n) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<T> codes(n);
      for (auto& c : codes) c = T::from_bits(rng());
      // Sentinels on both sides of the exact-size span.
      const std::size_t nb = packed_bytes<T>(n);
      Bytes buffer(nb + 2, 0xA5);
      pack(std::span<const T>(codes), std::span<std::uint8_t>(buffer).subspan(1, nb));
      EXPECT_EQ(buffer.front(), 0xA5);
      EXPECT_EQ(buffer.back(), 0xA5);
      const Bytes bytes(buffer.begin() + 1, buffer.end() - 1);
      ASSERT_EQ(bytes, bit_stream(codes)) << "n = " << n;

      // Padding bits are ignored by unpack: set them all.
      Bytes dirty = bytes;
      const std::size_t used_bits = n * finfo<T>::bits;
      if (used_bits % 8 != 0)
        dirty.back() = static_cast<std::uint8_t>(dirty.back() | (0xFFu << (used_bits % 8)));
      std::vector<T> back(n + 1, T::from_bits(0x3));
      unpack(std::span<const std::uint8_t>(dirty), std::span<T>(back).first(n));
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i].bits(), codes[i].bits());
      EXPECT_EQ(back[n].bits(), 0x3);  // the element after the span is untouched
    }
  }
}

TYPED_TEST(PackedTest, size_mismatch_throws_before_writing) {
  using T = TypeParam;
  const std::vector<T> codes(5, T::from_bits(1));
  Bytes wrong(packed_bytes<T>(5) + 1, 0xEE);
  EXPECT_THROW(pack(std::span<const T>(codes), std::span<std::uint8_t>(wrong)),
               std::invalid_argument);
  EXPECT_EQ(wrong, Bytes(wrong.size(), 0xEE));
  wrong.resize(packed_bytes<T>(5) - 1);
  EXPECT_THROW(pack(std::span<const T>(codes), std::span<std::uint8_t>(wrong)),
               std::invalid_argument);
  std::vector<T> out(5, T::from_bits(2));
  EXPECT_THROW(unpack(std::span<const std::uint8_t>(wrong), std::span<T>(out)),
               std::invalid_argument);
  EXPECT_EQ(out[0].bits(), 2);
  const std::vector<float> x(5, 1.0f);
  EXPECT_THROW(quantize_packed<T>(x, std::span<std::uint8_t>(wrong)), std::invalid_argument);
  std::vector<float> y(5, 9.0f);
  EXPECT_THROW(dequantize_packed<T>(std::span<const std::uint8_t>(wrong), y),
               std::invalid_argument);
  EXPECT_EQ(y[0], 9.0f);
}

// Floats over the element's range and beyond, with ties, zeros and specials.
std::vector<float> test_floats(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> wide(-40.0f, 40.0f);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (rng() % 8) {
      case 0:
        x[i] = static_cast<float>(static_cast<int>(rng() % 64) - 32) / 8.0f;
        break;  // ties
      case 1:
        x[i] = (rng() & 1) ? -0.0f : 0.0f;
        break;
      case 2:
        x[i] = (rng() % 3 == 0)
                   ? std::numeric_limits<float>::quiet_NaN()
                   : ((rng() & 1) ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity();
        break;
      default:
        x[i] = wide(rng);
    }
  }
  return x;
}

TYPED_TEST(PackedTest, quantize_packed_is_convert_then_pack) {
  using T = TypeParam;
  struct Policy {
    Round r;
    Overflow o;
  };
  const Policy policies[] = {{Round::nearest_even, Overflow::ieee},
                             {Round::nearest_even, Overflow::saturate},
                             {Round::toward_zero, Overflow::ieee},
                             {Round::upward, Overflow::saturate},
                             {Round::stochastic, Overflow::saturate}};
  // Lengths around the 1024-element chunk and the packing groups.
  for (std::size_t n : {1u, 2u, 3u, 5u, 9u, 1023u, 1024u, 1025u, 2050u, 3001u}) {
    const std::vector<float> x = test_floats(n, static_cast<std::uint32_t>(n));
    for (const Policy& p : policies) {
      const ConvertOptions opts{.round = p.r, .overflow = p.o, .seed = 42, .first_index = 1000};
      std::vector<T> codes(n);
      FlagCounts expect_stats, stats;
      ConvertOptions with_stats = opts;
      with_stats.stats = &expect_stats;
      convert(std::span<const float>(x), std::span<T>(codes), with_stats);
      const Bytes expect = packed_of(codes);

      Bytes got(packed_bytes<T>(n), 0xEE);
      with_stats.stats = &stats;
      quantize_packed<T>(x, std::span<std::uint8_t>(got), with_stats);
      ASSERT_EQ(got, expect) << "n = " << n << ", round " << static_cast<int>(p.r);
      EXPECT_EQ(stats, expect_stats);

      std::vector<float> y(n), expect_y(n);
      dequantize_packed<T>(std::span<const std::uint8_t>(got), y);
      convert(std::span<const T>(codes), std::span<float>(expect_y));
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(expect_y[i]));
    }
  }
  // The Round/Overflow overload is the options overload.
  const std::vector<float> x = test_floats(77, 3);
  Bytes a(packed_bytes<T>(77)), b(packed_bytes<T>(77));
  quantize_packed<T>(x, std::span<std::uint8_t>(a), Round::stochastic, Overflow::saturate, 9);
  quantize_packed<T>(
      x, std::span<std::uint8_t>(b),
      ConvertOptions{.round = Round::stochastic, .overflow = Overflow::saturate, .seed = 9});
  EXPECT_EQ(a, b);
}

TEST(Packed, fp4_values_through_quantize_packed) {
  // 1.0 is 0b0'01'0 = 0x2, -6.0 is 0b1'11'1 = 0xF, 0.5 (subnormal) 0x1, 3.0 0x5.
  const std::vector<float> x = {1.0f, -6.0f, 0.5f, 3.0f, 100.0f};
  Bytes got(packed_bytes<float4_e2m1fn>(x.size()));
  quantize_packed<float4_e2m1fn>(x, std::span<std::uint8_t>(got), Round::nearest_even,
                                 Overflow::saturate);
  EXPECT_EQ(got, (Bytes{0xF2, 0x51, 0x07}));
}

}  // namespace
}  // namespace lplab::kernels
