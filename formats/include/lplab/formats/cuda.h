// Interop with CUDA's own low-precision types (cuda_fp16.h, cuda_bf16.h,
// cuda_fp8.h, cuda_fp6.h, cuda_fp4.h): bit-for-bit reinterpretation, no
// rounding. Needs the CUDA headers on the include path; host compilers can use
// them too, since those headers carry host implementations.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include "lplab/formats/catalog.h"

namespace lplab::cuda {

LPLAB_HD inline __half to_cuda(float16 x) {
  __half_raw r;
  r.x = x.bits();
  return __half(r);
}
LPLAB_HD inline float16 from_cuda(__half x) { return float16::from_bits(__half_raw(x).x); }

LPLAB_HD inline __nv_bfloat16 to_cuda(bfloat16 x) {
  __nv_bfloat16_raw r;
  r.x = x.bits();
  return __nv_bfloat16(r);
}
LPLAB_HD inline bfloat16 from_cuda(__nv_bfloat16 x) {
  return bfloat16::from_bits(__nv_bfloat16_raw(x).x);
}

// The fp8/fp6/fp4 wrappers keep their code in the public member __x.
#define LPLAB_CUDA_BYTE_TYPE(lplab_type, cuda_type)          \
  LPLAB_HD inline cuda_type to_cuda(lplab_type x) {          \
    cuda_type r;                                             \
    r.__x = x.bits();                                        \
    return r;                                                \
  }                                                          \
  LPLAB_HD inline lplab_type from_cuda(cuda_type x) {        \
    return lplab_type::from_bits(x.__x);                     \
  }
LPLAB_CUDA_BYTE_TYPE(float8_e4m3fn, __nv_fp8_e4m3)
LPLAB_CUDA_BYTE_TYPE(float8_e5m2, __nv_fp8_e5m2)
LPLAB_CUDA_BYTE_TYPE(float8_e8m0fnu, __nv_fp8_e8m0)
LPLAB_CUDA_BYTE_TYPE(float6_e2m3fn, __nv_fp6_e2m3)
LPLAB_CUDA_BYTE_TYPE(float6_e3m2fn, __nv_fp6_e3m2)
LPLAB_CUDA_BYTE_TYPE(float4_e2m1fn, __nv_fp4_e2m1)
#undef LPLAB_CUDA_BYTE_TYPE

}  // namespace lplab::cuda
