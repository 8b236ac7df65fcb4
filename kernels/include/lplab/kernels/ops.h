// The bodies of lplab's elementwise ops, written once as LPLAB_HD functors
// over a real type R (float for the fp32 compute paths, double for the fp64
// reference), so that a CUDA backend is a thin launch layer over the same
// code. The math functions they call are found by argument-dependent lookup
// on R: the C library's (std::tanh, std::erf, std::pow) on the host, CUDA's
// on the device.
//
// The SIMD kernels (elementwise-inl.h) vectorise the same formulas with Google
// Highway; for relu, square, sqrt, rsqrt, scale, add, mul and axpy they are
// bit-identical to these functors at R = float (a test proves it), and for
// gelu_tanh they differ only in tanh (Highway's contrib/math Tanh, at most
// 4 ulp, against the C library's).
#pragma once

#include <cmath>

#include "lplab/formats/config.h"

namespace lplab::kernels::ops {

// An op built from a step's parameter (pow's exponent, scale's factor)
// where it takes one: takes_param<F> says whether F{p} is its construction.
template <class F>
inline constexpr bool takes_param = requires { F{0.0f}; };
template <class F>
LPLAB_HD constexpr F make(float param) {
  if constexpr (takes_param<F>)
    return F{param};
  else
    return F{};
}

// The value itself: a cast, whose rounding is the output's.
struct Identity {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    return x;
  }
};

// relu(x) = x for x >= 0 or NaN (the sign of -0 kept), +0 for x < 0.
struct Relu {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    return x < R(0) ? R(0) : x;
  }
};

// GELU, tanh form (Hendrycks & Gimpel 2016, eq. 2; PyTorch's approximate="tanh"):
//   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
struct GeluTanh {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    using std::tanh;
    const R k0 = R(0.79788456080286535587989211986876);  // sqrt(2/pi)
    const R k1 = R(0.044715);
    const R u = k0 * (x + k1 * (x * x * x));
    return (R(0.5) * x) * (R(1) + tanh(u));
  }
};

// GELU, exact form: 0.5 x (1 + erf(x / sqrt(2))) (PyTorch's default).
struct GeluErf {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    using std::erf;
    const R r2 = R(0.70710678118654752440084436210485);  // 1/sqrt(2)
    return (R(0.5) * x) * (R(1) + erf(x * r2));
  }
};

struct Square {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    return x * x;
  }
};

struct Sqrt {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    using std::sqrt;
    return sqrt(x);
  }
};

// 1 / sqrt(x): two correctly rounded operations (PyTorch's CPU rsqrt).
struct Rsqrt {
  template <class R>
  LPLAB_HD R operator()(R x) const {
    using std::sqrt;
    return R(1) / sqrt(x);
  }
};

struct Pow {
  float p;
  template <class R>
  LPLAB_HD R operator()(R x) const {
    using std::pow;
    return pow(x, R(p));
  }
};

struct Scale {
  float s;
  template <class R>
  LPLAB_HD R operator()(R x) const {
    return R(s) * x;
  }
};

struct Add {
  template <class R>
  LPLAB_HD R operator()(R a, R b) const {
    return a + b;
  }
};

struct Mul {
  template <class R>
  LPLAB_HD R operator()(R a, R b) const {
    return a * b;
  }
};

// alpha * a + b with one rounding (a fused multiply-add).
struct Axpy {
  float alpha;
  template <class R>
  LPLAB_HD R operator()(R a, R b) const {
    using std::fma;
    return fma(R(alpha), a, b);
  }
};

}  // namespace lplab::kernels::ops
