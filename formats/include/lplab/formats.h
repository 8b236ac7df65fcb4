// lplab formats: bit-exact software low-precision floating-point types.
//
//   lplab::float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, ... -- the
//   catalog (lplab/formats/catalog.h) -- and any lplab::Float<Descriptor{...}>.
//
//   T::from_bits(code), t.bits(), static_cast<float>(t), static_cast<double>(t)
//   lplab::convert<T>(x, Round, Overflow[, Flags*, random_bits])
//   lplab::add/sub/mul/div/sqrt/fma(..., Round, Overflow, Flags*), operators
//   lplab::finfo<T>, std::numeric_limits<T>
//   lplab::parse_decimal(text), lplab::convert<T>(decimal, ...): text rounded once
//
// Optional companions: lplab/formats/fmt.h ({fmt}), lplab/formats/eigen.h
// (Eigen), lplab/formats/cuda.h (CUDA's __half, __nv_fp8_e4m3, ...).
#pragma once

#include "lplab/formats/arith.h"
#include "lplab/formats/catalog.h"
#include "lplab/formats/config.h"
#include "lplab/formats/descriptor.h"
#include "lplab/formats/finfo.h"
#include "lplab/formats/limits.h"
#include "lplab/formats/ops.h"
#include "lplab/formats/policy.h"
#include "lplab/formats/value.h"
#if !defined(__CUDA_ARCH__)
#include "lplab/formats/decimal.h"
#include "lplab/formats/io.h"
#endif
