// The oracle's block loops (arith_oracle_block.h). This file is compiled
// without -frounding-math: the residual route assumes the default rounding
// direction, and GCC 12 vectorizes no fused multiply-add under that option.
//
// Function multiversioning (GCC, x86-64): a version of each loop for
// x86-64-v4 (AVX-512F, 8 doubles a vector), x86-64-v3 (AVX2 with FMA, 4) and
// the baseline (SSE2, 2), picked by an ifunc resolver when the program loads
// (by the CPU's features, not its model). The versions with FMA form the
// quotient's residual with it. Other compilers and machines get one
// version, with FMA where the compiler says it is fast.
#include "formats/arith_oracle_block.h"

#include <bit>
#include <cstdint>

namespace lplab::testing::oracle {
namespace {

// 1. Round-to-odd and the zero sum's sign; 2. the rounding into the format,
// to nearest-even by the machine's addition (held equal to round_to by the
// test residual_sticky_equals_fenv_flags). The format's fields are copied so
// that they stay in registers.
template <Op op, Round mode, bool kFma>
[[gnu::always_inline]] inline void expected_loop(const Format16& f, double a,
                                                 const double* __restrict b,
                                                 double* __restrict ro,
                                                 double* __restrict want, std::size_t n) {
  const Format16 g = f;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = zero_sum_sign<op, mode>(a, b[i], ro_residual<op, kFma>(a, b[i]));  // 1
    ro[i] = r;
    if constexpr (mode == Round::nearest_even)
      want[i] = round_nearest_even_by_addition(g, r);  // 2
    else
      want[i] = round_to<mode>(g, r);
  }
}

template <Round mode, bool kFma>
[[gnu::always_inline]] inline void expected_of_mode(const Format16& f, Op op, double a,
                                                    const double* b, double* ro, double* want,
                                                    std::size_t n) {
  switch (op) {
    case Op::add: return expected_loop<Op::add, mode, kFma>(f, a, b, ro, want, n);
    case Op::sub: return expected_loop<Op::sub, mode, kFma>(f, a, b, ro, want, n);
    case Op::mul: return expected_loop<Op::mul, mode, kFma>(f, a, b, ro, want, n);
    case Op::div: return expected_loop<Op::div, mode, kFma>(f, a, b, ro, want, n);
    case Op::sqrt: break;  // unary: the sweeps take it one code at a time
  }
}

template <bool kFma>
[[gnu::always_inline]] inline void expected_any(const Format16& f, Op op, Round mode, double a,
                                                const double* b, double* ro, double* want,
                                                std::size_t n) {
  switch (mode) {
    case Round::nearest_even:
      return expected_of_mode<Round::nearest_even, kFma>(f, op, a, b, ro, want, n);
    case Round::nearest_away:
      return expected_of_mode<Round::nearest_away, kFma>(f, op, a, b, ro, want, n);
    case Round::toward_zero:
      return expected_of_mode<Round::toward_zero, kFma>(f, op, a, b, ro, want, n);
    case Round::upward: return expected_of_mode<Round::upward, kFma>(f, op, a, b, ro, want, n);
    case Round::downward:
      return expected_of_mode<Round::downward, kFma>(f, op, a, b, ro, want, n);
    case Round::stochastic: break;  // no single right answer
  }
}

// Quiet NaNs have the top fraction bit set (IEEE 754-2019 6.2.1); only a
// NaN is unequal to itself.
template <Layout layout>
[[gnu::always_inline]] inline std::size_t count_wrong_loop(const std::uint16_t* __restrict got,
                                                           const double* __restrict want,
                                                           std::uint32_t quiet, std::size_t n) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double value = layout == Layout::binary16 ? decode_float16(got[i]) : decode_bfloat16(got[i]);
    const std::uint64_t want_nan = one_if(want[i] != want[i]);
    const std::uint64_t got_quiet_nan = one_if(value != value) & one_if((got[i] & quiet) != 0);
    wrong += (want_nan & (got_quiet_nan ^ 1)) | ((want_nan ^ 1) & one_if(bits_of(value) != bits_of(want[i])));
  }
  return wrong;
}

[[gnu::always_inline]] inline std::size_t count_wrong_any(const Format16& f,
                                                          const std::uint16_t* got,
                                                          const double* want, std::size_t n) {
  const std::uint32_t quiet = 1u << (f.precision - 2);
  return f.layout == Layout::binary16 ? count_wrong_loop<Layout::binary16>(got, want, quiet, n)
                                      : count_wrong_loop<Layout::bfloat16>(got, want, quiet, n);
}

// Clang 14's multiversioning knows no x86-64-v3/v4; it gets the one version.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LPLAB_ORACLE_VERSION(isa, fma)                                                           \
  __attribute__((target(isa))) void expected_isa(const Format16& f, Op op, Round mode, double a, \
                                                 const double* b, double* ro, double* want,      \
                                                 std::size_t n) {                                \
    expected_any<fma>(f, op, mode, a, b, ro, want, n);                                           \
  }                                                                                              \
  __attribute__((target(isa))) std::size_t count_wrong_isa(                                      \
      const Format16& f, const std::uint16_t* got, const double* want, std::size_t n) {          \
    return count_wrong_any(f, got, want, n);                                                     \
  }
LPLAB_ORACLE_VERSION("default", false)
LPLAB_ORACLE_VERSION("arch=x86-64-v3", true)
LPLAB_ORACLE_VERSION("arch=x86-64-v4", true)
#undef LPLAB_ORACLE_VERSION
#else
#ifdef __FP_FAST_FMA
constexpr bool kFastFma = true;
#else
constexpr bool kFastFma = false;
#endif
void expected_isa(const Format16& f, Op op, Round mode, double a, const double* b, double* ro,
                  double* want, std::size_t n) {
  expected_any<kFastFma>(f, op, mode, a, b, ro, want, n);
}
std::size_t count_wrong_isa(const Format16& f, const std::uint16_t* got, const double* want,
                            std::size_t n) {
  return count_wrong_any(f, got, want, n);
}
#endif

}  // namespace

void expected_block(const Format16& f, Op op, Round mode, double a, const double* b, double* ro,
                    double* want, std::size_t n) {
  expected_isa(f, op, mode, a, b, ro, want, n);
}

std::size_t count_wrong(const Format16& f, const std::uint16_t* got, const double* want,
                        std::size_t n) {
  return count_wrong_isa(f, got, want, n);
}

}  // namespace lplab::testing::oracle
