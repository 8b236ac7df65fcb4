// Eigen support: NumTraits so that Eigen::Matrix<lplab::bfloat16, ...> and
// friends work, with arithmetic in the format itself (each operation rounded
// to nearest even, as the operators do).
#pragma once

#include <Eigen/Core>

#include "lplab/formats/arith.h"
#include "lplab/formats/limits.h"
#include "lplab/formats/ops.h"

namespace Eigen {

template <lplab::Descriptor D>
struct NumTraits<lplab::Float<D>> : GenericNumTraits<lplab::Float<D>> {
  using T = lplab::Float<D>;
  using Real = T;
  using NonInteger = T;
  using Nested = T;
  using Literal = T;
  enum {
    IsInteger = 0,
    IsSigned = D.is_signed ? 1 : 0,
    IsComplex = 0,
    RequireInitialization = 0,
    ReadCost = 1,
    AddCost = 3,
    MulCost = 3,
  };
  static constexpr T epsilon() { return std::numeric_limits<T>::epsilon(); }
  static constexpr T dummy_precision() { return T(lplab::finfo<T>::eps * 8); }
  static constexpr T highest() { return std::numeric_limits<T>::max(); }
  static constexpr T lowest() { return std::numeric_limits<T>::lowest(); }
  static constexpr T infinity() { return std::numeric_limits<T>::infinity(); }
  static constexpr T quiet_NaN() { return std::numeric_limits<T>::quiet_NaN(); }
  static constexpr int digits10() { return std::numeric_limits<T>::digits10; }
};

}  // namespace Eigen
