// Elementwise ops and reductions on strided views, in every format:
//
//   View<const bfloat16> x(...); View<bfloat16> y(...);
//   lplab::kernels::relu(x, y);                          // fp32 compute, rounded into bf16
//   lplab::kernels::square_sqrt(x, y, {.compute = Compute::per_op});   // the lecture's chain
//   lplab::kernels::map(chain, x, y, options);           // any chain of unary steps
//   double s = lplab::kernels::sum(x, Accumulate::storage);   // bf16 after every add
//
// Every op reads its operands' exact values (decoding a format is exact),
// computes in fp32 (or, for Compute::fp64, in double with the C library) and
// rounds into the output's format with the caller's rounding and overflow
// policy. Inputs and output may have any strides (a transposed view, a column
// slice, a stride-0 broadcast input); the result does not depend on the order
// elements are visited in (strided operands are walked in tiles). The output
// may be an input itself (the same view) but must not partly overlap an
// input, and must not broadcast (std::invalid_argument).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/ops.h"
#include "lplab/kernels/view.h"

namespace lplab::kernels {

// The ops, each list declared once with its names (enum_table.h).
// A unary op is one line, X(name, functor, vector form, what it computes):
// its functor in ops.h is its portable statement (the scalar reference, the
// fp64 path and a device's), and the vector form says how the SIMD kernels
// compute it at fp32 --
//   exact:  UnaryVector<op> (ops-inl.h), bit-identical to the functor at
//           float; the fused convert-op-convert engine and a device inline it;
//   vector: UnaryVector<op>, within the tolerance its description states
//           (a vector math function);
//   scalar: the functor, element by element (a C library function with no
//           vector equal).
// Every dispatch (apply_step, check_step, the SIMD loop, the fused engine,
// the CUDA backend) is generated from these lines; a new op is its line, its
// functor and, for exact or vector, its branch of UnaryVector.
#define LPLAB_UNARY_OPS(X)                                                                                 \
  X(identity, Identity, exact, "a cast: the value, rounded into the output format")                         \
  X(relu, Relu, exact, "max(x, 0) (ops::Relu)")                                                             \
  X(gelu_tanh, GeluTanh, vector,                                                                            \
    "GELU, tanh form (ops::GeluTanh); fp32 tanh: Highway contrib/math Tanh (<= 4 ulp)")                     \
  X(gelu_erf, GeluErf, scalar, "GELU, erf form (ops::GeluErf); fp32 erf: the C library's erff (glibc: <= 1 ulp)") \
  X(square, Square, exact, "x * x")                                                                         \
  X(sqrt, Sqrt, exact, "the square root, correctly rounded")                                                \
  X(rsqrt, Rsqrt, exact, "1 / sqrt(x), two correctly rounded fp32 operations")                              \
  X(pow, Pow, scalar, "x^param; fp32: the C library's powf (glibc: <= 1 ulp)")                              \
  X(scale, Scale, exact, "param * x")
#define LPLAB_UNARY_OP_ENTRY(name, functor, form, doc) LPLAB_ENUM_ENTRY(name, doc)
#define LPLAB_BINARY_OPS(X)       \
  X(add, "a + b")                 \
  X(mul, "a * b")                 \
  X(axpy, "alpha * a + b, one rounding (fma)")

enum class Unary { LPLAB_UNARY_OPS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE_OF(Unary, "unary op", LPLAB_UNARY_OPS, LPLAB_UNARY_OP_ENTRY)

// How the SIMD kernels compute an op (its line's third column).
enum class VectorForm { exact, vector, scalar };
#define LPLAB_UNARY_FORM(name, functor, form, doc) \
  case Unary::name:                                \
    return VectorForm::form;
LPLAB_HD constexpr VectorForm vector_form(Unary op) {
  switch (op) { LPLAB_UNARY_OPS(LPLAB_UNARY_FORM) }
  return VectorForm::scalar;
}
#undef LPLAB_UNARY_FORM
// Whether the op takes Step::param (its functor is built from it: pow, scale).
#define LPLAB_UNARY_PARAM(name, functor, form, doc) \
  case Unary::name:                                 \
    return ops::takes_param<ops::functor>;
LPLAB_HD constexpr bool takes_param(Unary op) {
  switch (op) { LPLAB_UNARY_OPS(LPLAB_UNARY_PARAM) }
  return false;
}
#undef LPLAB_UNARY_PARAM
enum class Binary { LPLAB_BINARY_OPS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Binary, "binary op", LPLAB_BINARY_OPS)

// "relu", "add": the names the tool, specs and Python take ("?" outside the enum).
constexpr const char* unary_name(Unary op) { return enum_name(op); }
constexpr const char* binary_name(Binary op) { return enum_name(op); }

// One step of a chain of unary ops; `param` is pow's exponent or scale's factor.
struct Step {
  Unary op = Unary::identity;
  float param = 0.0f;
};

// How a chain computes. per_op is what a framework does op by op
// (x.square().sqrt() in bf16 rounds the square to bf16); fused is what a
// fused kernel does.
#define LPLAB_COMPUTES(X)                                                         \
  X(per_op, "fp32, rounded into the output format after every step")             \
  X(fused, "fp32 through the whole chain, rounded into the output format once") \
  X(fp64, "the reference: the chain in double with the C library, rounded once")
enum class Compute { LPLAB_COMPUTES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Compute, "compute policy", LPLAB_COMPUTES)

struct ElementwiseOptions {
  Compute compute = Compute::per_op;
  Round round = Round::nearest_even;
  Overflow overflow = Overflow::ieee;
  // Round::stochastic: the rounding after step s of the element with
  // row-major index i uses stochastic_bits(seed + s, i).
  std::uint64_t seed = 0;
  // Worker threads for large arrays (at least 256K elements each): 1 (the
  // default) runs on the calling thread, 0 uses every core. Results do not
  // depend on it.
  unsigned threads = 1;
};

// How a reduction accumulates (reductions visit elements in row-major
// order). storage shows swamping: ml_dtypes' bf16 sum of 10,000 U(0,1) is 256.
#define LPLAB_ACCUMULATIONS(X)                            \
  X(fp64, "in double, in row-major order")                \
  X(fp32, "in float, in row-major order")                 \
  X(storage, "in the input's own format, rounded to nearest-even after every add")
enum class Accumulate { LPLAB_ACCUMULATIONS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Accumulate, "accumulation", LPLAB_ACCUMULATIONS)

// The type-erased face of the elementwise kernels: operands as (format id,
// pointer, layout), for callers that hold formats at run time (the Python
// bindings, the experiments) and for other backends of the same contract
// (lplab/cuda.h).

// A strided operand with its format, for the compiled entry points.
struct Operand {
  FormatId format;
  const void* data;
  Layout layout;
};
struct Output {
  FormatId format;
  void* data;
  Layout layout;
};

namespace detail {
template <class T>
constexpr FormatId checked_format_id() {
  constexpr FormatId id = format_id<std::remove_cv_t<T>>;
  static_assert(id != FormatId::none,
                "lplab::kernels elementwise ops take float or one of lplab's formats");
  return id;
}
}  // namespace detail

template <class T>
Operand operand(const View<T>& v) {
  return {detail::checked_format_id<T>(), v.data(), v.layout()};
}
template <class T>
Output output(const View<T>& v) {
  static_assert(!std::is_const_v<T>, "the output view must be writable");
  return {detail::checked_format_id<T>(), v.data(), v.layout()};
}

// The checks map_unary and map_binary make before any work (std::invalid_argument),
// for other backends of the same contract (lplab/cuda.h).
void check_map_unary(std::span<const Step> chain, const Operand& x, const Output& y,
                     const ElementwiseOptions& options);
void check_map_binary(Binary op, float alpha, const Operand& a, const Operand& b, const Output& y,
                      const ElementwiseOptions& options);

// One step, and one binary op, in R (double for Compute::fp64, float on a
// device), through the ops:: functors: the portable statement of each op.
#define LPLAB_UNARY_APPLY(name, functor, form, doc) \
  case Unary::name:                                 \
    return ops::make<ops::functor>(param)(x);
template <class R>
LPLAB_HD R apply_step(Unary op, float param, R x) {
  switch (op) { LPLAB_UNARY_OPS(LPLAB_UNARY_APPLY) }
  return x;
}
#undef LPLAB_UNARY_APPLY
template <class R>
LPLAB_HD R apply_binary(Binary op, float alpha, R a, R b) {
  switch (op) {
    case Binary::add: return ops::Add{}(a, b);
    case Binary::mul: return ops::Mul{}(a, b);
    case Binary::axpy: return ops::Axpy{alpha}(a, b);
  }
  return a;
}

void map_unary(std::span<const Step> chain, const Operand& x, const Output& y,
               const ElementwiseOptions& options);
void map_binary(Binary op, float alpha, const Operand& a, const Operand& b, const Output& y,
                const ElementwiseOptions& options);
void triu(const Operand& x, const Output& y, std::ptrdiff_t diagonal);
double reduce_sum(const Operand& x, Accumulate acc);
double reduce_amax(const Operand& x);
double round_to(FormatId format, double v);  // nearest-even, IEEE overflow

// y = f_n(...f_1(x)) for the chain {f_1, ..., f_n} of at most 16 steps (an
// empty chain casts). x and y have the same shape; throws
// std::invalid_argument otherwise, before any work.
template <class X, class Y>
void map(std::span<const Step> chain, const View<X>& x, const View<Y>& y,
         const ElementwiseOptions& options = {}) {
  map_unary(chain, operand(x), output(y), options);
}
template <class X, class Y>
void map(std::initializer_list<Step> chain, const View<X>& x, const View<Y>& y,
         const ElementwiseOptions& options = {}) {
  map(std::span<const Step>(chain.begin(), chain.size()), x, y, options);
}

#define LPLAB_KERNELS_UNARY(name, op)                                                           \
  template <class X, class Y>                                                                   \
  void name(const View<X>& x, const View<Y>& y, const ElementwiseOptions& options = {}) {       \
    const Step step{Unary::op, 0.0f};                                                           \
    map_unary(std::span<const Step>(&step, 1), operand(x), output(y), \
                      options);                                                                 \
  }
LPLAB_KERNELS_UNARY(cast, identity)
LPLAB_KERNELS_UNARY(relu, relu)
LPLAB_KERNELS_UNARY(gelu_tanh, gelu_tanh)
LPLAB_KERNELS_UNARY(gelu_erf, gelu_erf)
LPLAB_KERNELS_UNARY(square, square)
LPLAB_KERNELS_UNARY(sqrt, sqrt)
LPLAB_KERNELS_UNARY(rsqrt, rsqrt)
#undef LPLAB_KERNELS_UNARY

template <class X, class Y>
void pow(const View<X>& x, float p, const View<Y>& y, const ElementwiseOptions& options = {}) {
  const Step step{Unary::pow, p};
  map_unary(std::span<const Step>(&step, 1), operand(x), output(y), options);
}
template <class X, class Y>
void scale(const View<X>& x, float s, const View<Y>& y, const ElementwiseOptions& options = {}) {
  const Step step{Unary::scale, s};
  map_unary(std::span<const Step>(&step, 1), operand(x), output(y), options);
}

// The lecture's x.square().sqrt(): |x| in exact arithmetic; with
// Compute::per_op the square is rounded into the output format first (and
// overflows or underflows there), with Compute::fused it is not.
template <class X, class Y>
void square_sqrt(const View<X>& x, const View<Y>& y, const ElementwiseOptions& options = {}) {
  map({Step{Unary::square}, Step{Unary::sqrt}}, x, y, options);
}

// y = a op b for a, b and y of the same shape (a stride of 0 broadcasts).
template <class A, class B, class Y>
void add(const View<A>& a, const View<B>& b, const View<Y>& y, const ElementwiseOptions& options = {}) {
  map_binary(Binary::add, 0.0f, operand(a), operand(b), output(y), options);
}
template <class A, class B, class Y>
void mul(const View<A>& a, const View<B>& b, const View<Y>& y, const ElementwiseOptions& options = {}) {
  map_binary(Binary::mul, 0.0f, operand(a), operand(b), output(y), options);
}
// out = alpha * x + y.
template <class A, class B, class Y>
void axpy(float alpha, const View<A>& x, const View<B>& y, const View<Y>& out,
          const ElementwiseOptions& options = {}) {
  map_binary(Binary::axpy, alpha, operand(x), operand(y), output(out),
                     options);
}

// torch.triu: y = x on and above diagonal `diagonal` of the last two
// dimensions (column - row >= diagonal), +0 below; an exact copy, so x and y
// have the same format. Throws for rank < 2 or for E8M0, which has no zero.
template <class X, class Y>
void triu(const View<X>& x, const View<Y>& y, std::ptrdiff_t diagonal = 0) {
  static_assert(std::is_same_v<std::remove_const_t<X>, Y>, "triu copies: x and y have one format");
  triu(operand(x), output(y), diagonal);
}

// Reductions over every element. The result is the accumulator's value
// (exact in double): for Accumulate::storage a value of T, for fp32 a float.
template <class X>
double sum(const View<X>& x, Accumulate acc = Accumulate::fp32) {
  return reduce_sum(operand(x), acc);
}
// sum / numel, the division in the accumulator's arithmetic (for
// Accumulate::storage: in double, then rounded into T); for an empty view 0/0
// (NaN, or with storage accumulation 0/0 rounded into T: NaN where T has one,
// otherwise what T's conversion gives NaN).
template <class X>
double mean(const View<X>& x, Accumulate acc = Accumulate::fp32) {
  const double n = static_cast<double>(x.numel());
  const double s = reduce_sum(operand(x), acc);
  switch (acc) {
    case Accumulate::fp64: return s / n;
    case Accumulate::fp32: return static_cast<float>(s) / static_cast<float>(n);
    case Accumulate::storage: return round_to(detail::checked_format_id<X>(), s / n);
  }
  return s / n;
}
// max |x| (exact: no rounding); NaN if any element is NaN; 0 for an empty view.
template <class X>
double amax(const View<X>& x) {
  return reduce_amax(operand(x));
}

}  // namespace lplab::kernels
