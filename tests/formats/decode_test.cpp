// Every code of every format decoded: against the independent ldexp decoder,
// and against CUDA's own decoders where CUDA has the format.
#include <gtest/gtest.h>

#include <cmath>
#include <type_traits>

#if LPLAB_HAVE_CUDA_ORACLE  // CUDA's headers were found (cmake/CudaOracle.cmake)
#include "support/cuda_oracles.h"
#endif
#include "support/reference.h"
#include "support/typed.h"

namespace lplab::testing {
namespace {

template <class T>
class Decode : public ::testing::Test {};
TYPED_TEST_SUITE(Decode, SmallFormats, FormatNames);

TYPED_TEST(Decode, every_code_matches_independent_decoder) {
  using T = TypeParam;
  std::uint64_t numbers = 0, nans = 0;
  for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
    const RefDecoded want = ref_decode(T::descriptor, c);
    const T x = T::from_bits(c);
    ASSERT_EQ(x.bits(), c);
    const double d = static_cast<double>(x);
    const float f = static_cast<float>(x);
    if (want.cls == RefClass::nan) {
      ++nans;
      EXPECT_TRUE(std::isnan(d) && std::isnan(f) && isnan(x)) << "code " << c;
      continue;
    }
    ++numbers;
    EXPECT_EQ(d, want.value) << "code " << c;
    EXPECT_EQ(std::signbit(d), std::signbit(want.value)) << "code " << c;
    EXPECT_EQ(static_cast<double>(f), want.value) << "code " << c;  // exact in float
    // Round trip: converting the decoded value back gives the same code.
    EXPECT_EQ(T(d).bits(), c) << "code " << c;
    EXPECT_EQ(T(f).bits(), c) << "code " << c;
  }
  EXPECT_EQ(numbers, finfo<T>::finite_codes + (finfo<T>::has_infinity ? 2 : 0));
  EXPECT_EQ(nans, finfo<T>::nan_codes);
}

// The class of a decoded code and of a number read from text is the public
// ValueKind; detail::Kind is its internal name.
static_assert(std::is_same_v<detail::Kind, ValueKind>);
static_assert(std::is_same_v<decltype(Decimal::kind), ValueKind>);
static_assert(detail::decode<float8_e5m2::descriptor>(0x00).kind == ValueKind::zero);
static_assert(detail::decode<float8_e5m2::descriptor>(0x3c).kind == ValueKind::finite);  // 1.0
static_assert(detail::decode<float8_e5m2::descriptor>(0x7c).kind == ValueKind::infinite);
static_assert(detail::decode<float8_e5m2::descriptor>(0x7e).kind == ValueKind::nan);

TEST(DecodeKind, numbers_from_text_carry_the_value_kind) {
  EXPECT_EQ(parse_decimal("-0")->kind, ValueKind::zero);
  EXPECT_EQ(parse_decimal("0.1")->kind, ValueKind::finite);
  EXPECT_EQ(parse_decimal("-inf")->kind, ValueKind::infinite);
  EXPECT_EQ(parse_decimal("nan")->kind, ValueKind::nan);
}

#if LPLAB_HAVE_CUDA_ORACLE
// CUDA's decoders: fp16/bf16 to float, fp8/fp6/fp4 to half, e8m0 to bfloat16.
float cuda_decode(Target t, std::uint32_t c) {
  auto half = [](__half_raw r) { return __half2float(__half(r)); };
  switch (t) {
    case Target::f16: return __half2float(__ushort_as_half(static_cast<unsigned short>(c)));
    case Target::bf16: return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(c)));
    case Target::e4m3fn: return half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3));
    case Target::e5m2: return half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2));
    case Target::e8m0: return __bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c))));
    case Target::e2m3: return half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3));
    case Target::e3m2: return half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2));
    case Target::e2m1: return half(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1));
  }
  return 0;
}

TEST(DecodeCuda, every_code_matches_cuda) {
  for (Target t : {Target::f16, Target::bf16, Target::e4m3fn, Target::e5m2, Target::e8m0,
                   Target::e2m3, Target::e3m2, Target::e2m1}) {
    with_target(t, [&]<class T>() {
      std::uint64_t checked = 0;
      for (std::uint64_t c = 0; c < code_count<T>(); ++c) {
        const float want = cuda_decode(t, static_cast<std::uint32_t>(c));
        const float got = static_cast<float>(T::from_bits(c));
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(got)) << T::descriptor.name.c_str() << " code " << c;
        } else {
          EXPECT_EQ(detail::bit_cast<std::uint32_t>(got), detail::bit_cast<std::uint32_t>(want))
              << T::descriptor.name.c_str() << " code " << c;
        }
        ++checked;
      }
      EXPECT_EQ(checked, code_count<T>());
    });
  }
}
#endif  // LPLAB_HAVE_CUDA_ORACLE

}  // namespace
}  // namespace lplab::testing
