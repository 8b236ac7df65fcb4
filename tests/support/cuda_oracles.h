// CUDA's host conversions (cuda_fp16/bf16/fp8/fp6/fp4 .hpp), each paired with
// the lplab policies that must reproduce it bit for bit. This table is the one
// documented in docs/cuda-mapping.md.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lplab/formats.h"

namespace lplab::testing {

enum class Target { f16, bf16, e4m3fn, e5m2, e8m0, e2m3, e3m2, e2m1 };

// A conversion from float, one input at a time and over an array: the array
// form inlines the conversion into its loop (the sweeps call it on all 2^32
// inputs, where a call per input was a sixth of their time).
struct FloatConversion {
  std::uint32_t (*one)(float) = nullptr;
  void (*many)(const float* in, std::size_t n, std::uint32_t* out) = nullptr;
};

// Both forms of a captureless lambda.
template <class F>
constexpr FloatConversion over_floats(F) {
  return {+[](float x) -> std::uint32_t { return F{}(x); },
          +[](const float* in, std::size_t n, std::uint32_t* out) {
            for (std::size_t j = 0; j < n; ++j) out[j] = F{}(in[j]);
          }};
}

struct CudaConversion {
  std::string name;  // test name: f32_to_<format>_<round>_<overflow>
  Target target;
  Round round;
  Overflow overflow;
  FloatConversion from_float;
  std::uint32_t (*from_double)(double);  // nullptr where CUDA has no double version
};

inline std::uint32_t h(__half x) { return __half_as_ushort(x); }
inline std::uint32_t b(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }

inline const std::vector<CudaConversion>& cuda_conversions() {
  using R = Round;
  using O = Overflow;
  static const std::vector<CudaConversion> table = {
      // __float2half_r*: IEEE overflow (rn, ru: inf; rz, rd: max for positives).
      {"f16_rne_ieee", Target::f16, R::nearest_even, O::ieee, over_floats([](float x) { return h(__float2half_rn(x)); }), [](double x) { return h(__double2half(x)); }},
      {"f16_rz_ieee", Target::f16, R::toward_zero, O::ieee, over_floats([](float x) { return h(__float2half_rz(x)); }), nullptr},
      {"f16_rd_ieee", Target::f16, R::downward, O::ieee, over_floats([](float x) { return h(__float2half_rd(x)); }), nullptr},
      {"f16_ru_ieee", Target::f16, R::upward, O::ieee, over_floats([](float x) { return h(__float2half_ru(x)); }), nullptr},
      {"bf16_rne_ieee", Target::bf16, R::nearest_even, O::ieee, over_floats([](float x) { return b(__float2bfloat16_rn(x)); }), [](double x) { return b(__double2bfloat16(x)); }},
      {"bf16_rz_ieee", Target::bf16, R::toward_zero, O::ieee, over_floats([](float x) { return b(__float2bfloat16_rz(x)); }), nullptr},
      {"bf16_rd_ieee", Target::bf16, R::downward, O::ieee, over_floats([](float x) { return b(__float2bfloat16_rd(x)); }), nullptr},
      {"bf16_ru_ieee", Target::bf16, R::upward, O::ieee, over_floats([](float x) { return b(__float2bfloat16_ru(x)); }), nullptr},
      // __nv_cvt_float_to_fp8: round to nearest even only.
      {"e4m3fn_rne_satfinite", Target::e4m3fn, R::nearest_even, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }},
      {"e4m3fn_rne_ieee", Target::e4m3fn, R::nearest_even, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E4M3); }},
      {"e5m2_rne_satfinite", Target::e5m2, R::nearest_even, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }},
      {"e5m2_rne_ieee", Target::e5m2, R::nearest_even, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E5M2); }},
      // __nv_cvt_float_to_e8m0: toward zero and upward (cudaRoundPosInf).
      {"e8m0_rz_satfinite", Target::e8m0, R::toward_zero, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); }},
      {"e8m0_rz_ieee", Target::e8m0, R::toward_zero, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_e8m0(x, __NV_NOSAT, cudaRoundZero); }},
      {"e8m0_ru_satfinite", Target::e8m0, R::upward, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }},
      {"e8m0_ru_ieee", Target::e8m0, R::upward, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); }},
      // __nv_cvt_float_to_fp6/fp4: satfinite always (the formats have no inf or
      // NaN, so lplab's ieee policy saturates too); nearest even and toward zero.
      {"e2m3fn_rne_satfinite", Target::e2m3, R::nearest_even, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp6(x, __NV_E2M3, cudaRoundNearest); }},
      {"e2m3fn_rne_ieee", Target::e2m3, R::nearest_even, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }), nullptr},
      {"e2m3fn_rz_satfinite", Target::e2m3, R::toward_zero, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp6(x, __NV_E2M3, cudaRoundZero); }},
      {"e3m2fn_rne_satfinite", Target::e3m2, R::nearest_even, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp6(x, __NV_E3M2, cudaRoundNearest); }},
      {"e3m2fn_rne_ieee", Target::e3m2, R::nearest_even, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }), nullptr},
      {"e3m2fn_rz_satfinite", Target::e3m2, R::toward_zero, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp6(x, __NV_E3M2, cudaRoundZero); }},
      {"e2m1fn_rne_satfinite", Target::e2m1, R::nearest_even, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp4(x, __NV_E2M1, cudaRoundNearest); }},
      {"e2m1fn_rne_ieee", Target::e2m1, R::nearest_even, O::ieee, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }), nullptr},
      {"e2m1fn_rz_satfinite", Target::e2m1, R::toward_zero, O::saturate, over_floats([](float x) -> std::uint32_t { return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero); }), [](double x) -> std::uint32_t { return __nv_cvt_double_to_fp4(x, __NV_E2M1, cudaRoundZero); }},
  };
  return table;
}

// Calls f.template operator()<T>() with the lplab type of a CUDA target.
template <class F>
decltype(auto) with_target(Target t, F&& f) {
  switch (t) {
    case Target::f16: return f.template operator()<float16>();
    case Target::bf16: return f.template operator()<bfloat16>();
    case Target::e4m3fn: return f.template operator()<float8_e4m3fn>();
    case Target::e5m2: return f.template operator()<float8_e5m2>();
    case Target::e8m0: return f.template operator()<float8_e8m0fnu>();
    case Target::e2m3: return f.template operator()<float6_e2m3fn>();
    case Target::e3m2: return f.template operator()<float6_e3m2fn>();
    case Target::e2m1: return f.template operator()<float4_e2m1fn>();
  }
  return f.template operator()<float16>();
}

// The documented differences between CUDA and lplab (docs/cuda-mapping.md).
// Returns the code CUDA is expected to give for x, given lplab's conversion
// `ours` of x and of |x|: CUDA's E8M0 conversion takes |x| and maps zero to
// 2^-127 (code 0), where lplab gives NaN as ml_dtypes does. NaN inputs are
// compared as classes by the callers: CUDA canonicalizes NaN (0x7FFF, 0x7F),
// lplab keeps sign and payload (IEEE 754-2019 6.2.3).
template <class T, class S>
std::uint32_t cuda_expected(S x, Round r, Overflow o) {
  if constexpr (std::is_same_v<T, float8_e8m0fnu>) {
    if (x == 0) return 0x00;
    if (x < 0) return convert<T>(-x, r, o).bits();
  }
  return convert<T>(x, r, o).bits();
}

}  // namespace lplab::testing
