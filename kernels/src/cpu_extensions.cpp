// Instructions beyond the Highway targets' own (targets.h: cpu_extensions).
//
// Debian 12's Highway (1.0.3) compiles AVX-512 as one target, AVX3 (F, VL,
// DQ, BW); its AVX3_DL target (VBMI, VBMI2, VNNI, ...) is attainable only
// with HWY_WANT_AVX3_DL, which would compile every kernel of lplab once more.
// So the few kernels that gain from an extension are written once more here,
// each under a GCC/Clang `target` attribute, and a call takes one when
//   1. the CPU has the extension (the compiler's CPUID probe, read once),
//   2. the calling thread's target is the extension's base (AVX3 for the
//      AVX-512 ones: forcing AVX2 or lower leaves them out), and
//   3. neither LPLAB_CPU_EXTENSIONS=off nor force_thread_cpu_extensions(false)
//      forbids them (tests and benchmarks compare both ways).
// Each kernel has a test against the scalar core on every machine that has
// the extension, with the extensions allowed and forbidden
// (elementwise_test: one_byte_tables_with_and_without_extensions,
// fp16_arithmetic_with_and_without_extensions; convert_test:
// bfloat16_with_and_without_extensions). The kernels:
//   AVX512_VBMI  vpermi2b: the one-byte tables of elementwise ops;
//   AVX512_FP16  vaddph, vmulph: fp16 add, mul, square and scale by an
//                fp16 value, fp16 in and out, to nearest-even. Each is
//                IEEE's correctly rounded binary16 operation, which the fp32
//                route (decode, the op in float, vcvtps2ph) equals: float's
//                24 bits are at least 2 x 11 + 2, so rounding the float
//                result again to binary16 is one rounding (Figueroa, "When
//                is double rounding innocuous?", 1995). (vsqrtph is exact
//                too but slower than the fp32 route on Sapphire Rapids,
//                0.57x: docs/kernels.md.)
//   AVX512_BF16  vcvtne2ps2bf16: float -> bfloat16 to nearest-even with IEEE
//                overflow, the NaN rule of round.h (sign and high payload
//                kept, the quiet bit set). It reads subnormal inputs as
//                zeros (Intel SDM, VCVTNE2PS2BF16), so a block that holds
//                one takes the integer rounding for those lanes.
// Compilers: GCC 12 and Clang 16 have the FP16 intrinsics under a target
// attribute; with an older one (Debian 12's clang 14, the fuzzing build)
// the FP16 kernels are left out and never reported.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch.h"
#include "kernel_args.h"
#include "hwy/highway.h"
#include "lplab/kernels/targets.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LPLAB_X86_EXTENSIONS 1
#if (defined(__clang__) && __clang_major__ >= 16) || (!defined(__clang__) && __GNUC__ >= 12)
#define LPLAB_FP16_EXTENSION 1
#else
#define LPLAB_FP16_EXTENSION 0
#endif
#else
#define LPLAB_X86_EXTENSIONS 0
#define LPLAB_FP16_EXTENSION 0
#endif

namespace lplab::kernels {

namespace {

// 1 allowed, 0 forbidden on this thread, -1 as the process says.
thread_local int t_allowed = -1;

bool process_allows() {
  static const bool allowed = [] {
    const char* v = std::getenv("LPLAB_CPU_EXTENSIONS");
    return v == nullptr || std::string_view(v) != "off";
  }();
  return allowed;
}

bool cpu_has_vbmi() {
#if LPLAB_X86_EXTENSIONS
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

bool cpu_has_fp16() {
#if LPLAB_FP16_EXTENSION
  static const bool has = __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

bool cpu_has_bf16() {
#if LPLAB_X86_EXTENSIONS
  static const bool has = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

bool allowed() { return t_allowed >= 0 ? t_allowed == 1 : process_allows(); }

}  // namespace

namespace detail {

int thread_cpu_extensions() { return t_allowed; }
void set_thread_cpu_extensions(int state) { t_allowed = state; }

bool avx512_vbmi_active() {
  return cpu_has_vbmi() && allowed() && current_target_id() == HWY_AVX3;
}

bool avx512_fp16_active() { return cpu_has_fp16() && allowed() && current_target_id() == HWY_AVX3; }

bool avx512_bf16_active() { return cpu_has_bf16() && allowed() && current_target_id() == HWY_AVX3; }

#if LPLAB_X86_EXTENSIONS
#define LPLAB_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
// out[i] = table[in[i]] for n bytes (in may be out), 64 at a time: two
// vpermi2b (each a 128-byte table: the index's low 7 bits pick a byte of two
// registers), the index's top bit choosing between them (vpmovb2m and a
// masked blend). The tail by masked loads and stores.
LPLAB_VBMI void lookup_bytes_vbmi(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out,
                                  std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
#define LPLAB_LOOKUP(x)                                                                 \
  _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), _mm512_permutex2var_epi8(t0, x, t1), \
                         _mm512_permutex2var_epi8(t2, x, t3))
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i x = _mm512_loadu_si512(in + i);
    _mm512_storeu_si512(out + i, LPLAB_LOOKUP(x));
  }
  if (i < n) {
    const __mmask64 m = (std::uint64_t{1} << (n - i)) - 1;  // n - i < 64
    const __m512i x = _mm512_maskz_loadu_epi8(m, in + i);
    _mm512_mask_storeu_epi8(out + i, m, LPLAB_LOOKUP(x));
  }
#undef LPLAB_LOOKUP
}
#undef LPLAB_VBMI

#define LPLAB_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))
// bfloat16 to nearest-even of float bits u where u is subnormal (below
// 2^-126; no NaN): the high half of u + 0x7FFF + lsb (round.h's first fast
// path), the carry into the exponent the round-up.
LPLAB_BF16 inline __attribute__((always_inline)) __m512i bf16_nearest_high(__m512i u) {
  // (maskz: GCC 12 warns of the unmasked form's undefined source)
  const __m512i lsb = _mm512_and_si512(_mm512_maskz_srli_epi32(0xFFFF, u, 16), _mm512_set1_epi32(1));
  return _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb);
}

// 32 floats (lo: the first 16) to bfloat16: vcvtne2ps2bf16, and for lanes
// whose input is subnormal, which it reads as zero, the integer rounding.
LPLAB_BF16 inline __attribute__((always_inline)) __m512i bf16_of(__m512 lo, __m512 hi) {
  __m512i r = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
  // Subnormal lanes by their bits: exponent field 0, significand not
  // (vfpclassps would read them as zeros under MXCSR's DAZ).
  const auto subnormal = [](__m512 v) LPLAB_BF16 __attribute__((always_inline)) {
    const __m512i u = _mm512_castps_si512(v);
    return _mm512_mask_test_epi32_mask(_mm512_testn_epi32_mask(u, _mm512_set1_epi32(0x7F800000)), u,
                                       _mm512_set1_epi32(0x007FFFFF));
  };
  const __mmask16 dlo = subnormal(lo), dhi = subnormal(hi);
  if (HWY_UNLIKELY((dlo | dhi) != 0)) {
    // The high halves of both vectors' words, in order (vpermt2w).
    const __m512i odd = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29,
                                         27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const __m512i fixed = _mm512_permutex2var_epi16(bf16_nearest_high(_mm512_castps_si512(lo)), odd,
                                                    bf16_nearest_high(_mm512_castps_si512(hi)));
    const __mmask32 d = static_cast<__mmask32>(dlo) | (static_cast<__mmask32>(dhi) << 16);
    r = _mm512_mask_mov_epi16(r, d, fixed);
  }
  return r;
}

LPLAB_BF16 void encode_bf16_nearest_avx512bf16(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    _mm512_storeu_si512(out + i, bf16_of(_mm512_loadu_ps(in + i), _mm512_loadu_ps(in + i + 16)));
  if (i < n) {
    // The tail by masked loads (zeros beyond n) and a masked store.
    const std::size_t r = n - i;  // < 32
    const auto m_lo = static_cast<__mmask16>(r >= 16 ? 0xFFFF : (1u << r) - 1);
    const auto m_hi = static_cast<__mmask16>(r > 16 ? (1u << (r - 16)) - 1 : 0);
    const __m512i y = bf16_of(_mm512_maskz_loadu_ps(m_lo, in + i), _mm512_maskz_loadu_ps(m_hi, in + i + 16));
    _mm512_mask_storeu_epi16(out + i, static_cast<__mmask32>((std::uint64_t{1} << r) - 1), y);
  }
}
#undef LPLAB_BF16
#else
void lookup_bytes_vbmi(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = table[in[i]];  // not reached: avx512_vbmi_active() is false
}
void encode_bf16_nearest_avx512bf16(const float*, std::uint16_t*, std::size_t) {}  // not reached
#endif

#if LPLAB_FP16_EXTENSION
#define LPLAB_FP16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512fp16")))
namespace {

enum class Fp16Op { add, mul, square, scale };

// out[i] = op(a[i], b[i]) on 32 binary16 lanes at a time, the tail by masked
// loads and a masked store; under saturation the result clamped to +-65504
// (NaN kept: vmaxph and vminph return their second operand for a NaN).
template <Fp16Op kOp>
LPLAB_FP16 void fp16_loop(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out, std::size_t n,
                          __m512h param, bool saturate) {
  const __m512h hi = _mm512_castsi512_ph(_mm512_set1_epi16(0x7BFF));  // 65504
  const __m512h lo = _mm512_castsi512_ph(_mm512_set1_epi16(static_cast<short>(0xFBFF)));
  auto op = [&](__m512h x, __m512h y) LPLAB_FP16 __attribute__((always_inline)) {
    __m512h r;
    if constexpr (kOp == Fp16Op::add) r = _mm512_add_ph(x, y);
    else if constexpr (kOp == Fp16Op::mul) r = _mm512_mul_ph(x, y);
    else if constexpr (kOp == Fp16Op::square) r = _mm512_mul_ph(x, x);
    else r = _mm512_mul_ph(param, x);  // scale: param * x, as ops::Scale
    return saturate ? _mm512_min_ph(hi, _mm512_max_ph(lo, r)) : r;
  };
  constexpr bool kBinary = kOp == Fp16Op::add || kOp == Fp16Op::mul;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512h x = _mm512_castsi512_ph(_mm512_loadu_si512(a + i));
    const __m512h y = kBinary ? _mm512_castsi512_ph(_mm512_loadu_si512(b + i)) : x;
    _mm512_storeu_si512(out + i, _mm512_castph_si512(op(x, y)));
  }
  if (i < n) {
    const auto m = static_cast<__mmask32>((std::uint64_t{1} << (n - i)) - 1);  // n - i < 32
    const __m512h x = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, a + i));
    const __m512h y = kBinary ? _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, b + i)) : x;
    _mm512_mask_storeu_epi16(out + i, m, _mm512_castph_si512(op(x, y)));
  }
}

}  // namespace

LPLAB_FP16 bool fused_fp16_avx512fp16(const FusedArgs& f) {
  if (!f.float_arithmetic_exact) return false;  // (as the fp32 route's F16C steps)
  const auto* a = static_cast<const std::uint16_t*>(f.a);
  const auto* b = static_cast<const std::uint16_t*>(f.b);
  auto* out = static_cast<std::uint16_t*>(f.out);
  const bool sat = f.overflow == Overflow::saturate;
  const __m512h none = _mm512_setzero_ph();
  if (f.binary) {
    switch (f.binary_op) {
      case Binary::add: fp16_loop<Fp16Op::add>(a, b, out, f.n, none, sat); return true;
      case Binary::mul: fp16_loop<Fp16Op::mul>(a, b, out, f.n, none, sat); return true;
      default: return false;  // axpy: alpha is a float, one rounding of alpha a + b
    }
  }
  switch (f.unary) {
    case Unary::square: fp16_loop<Fp16Op::square>(a, nullptr, out, f.n, none, sat); return true;
    case Unary::scale: {
      // param a binary16 value (its product with any binary16 is exact in
      // float: the two routes round the same product once); else declined.
      const _Float16 h = static_cast<_Float16>(f.param);
      if (!(static_cast<float>(h) == f.param)) return false;
      fp16_loop<Fp16Op::scale>(a, nullptr, out, f.n, _mm512_set1_ph(h), sat);
      return true;
    }
    default: return false;
  }
}
#undef LPLAB_FP16
#else
bool fused_fp16_avx512fp16(const FusedArgs&) { return false; }  // not reached: avx512_fp16_active() is false
#endif

}  // namespace detail

void force_thread_cpu_extensions(bool allow) { t_allowed = allow ? 1 : 0; }

std::vector<std::string> cpu_extensions() {
  std::vector<std::string> out;
  if (detail::avx512_vbmi_active()) out.emplace_back("AVX512_VBMI");
  if (detail::avx512_fp16_active()) out.emplace_back("AVX512_FP16");
  if (detail::avx512_bf16_active()) out.emplace_back("AVX512_BF16");
  return out;
}

}  // namespace lplab::kernels
