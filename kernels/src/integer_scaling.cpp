// Integer scaling (integer_scaling.h): per group, 1. the group's lo, hi and
// amax, 2. its scale and zero point by the rule's parameters, 3. the scale
// (and a floating zero point) rounded into the scale format, 4. the codes
// from the stored values. Scalar float32 arithmetic throughout, compiled
// with -ffp-contract=off (kernels/CMakeLists.txt): no step is fused.
#include "lplab/kernels/integer_scaling.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace lplab::kernels {
namespace {

[[noreturn]] void fail(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string("lplab::kernels::") + fn + ": " + what);
}

// A call's shape: groups as runs of one row.
struct GroupPlan {
  std::size_t n = 0, cols = 0, group = 0, across = 0, groups = 0;
  bool per_tensor = false;
  // Group g's first value and count (0 for a group past a short last row's end).
  void bounds(std::size_t g, std::size_t& first, std::size_t& count) const noexcept {
    if (per_tensor) {
      first = 0;
      count = n;
      return;
    }
    const std::size_t row = g / across, c = g % across;
    const std::size_t row_first = row * cols, row_len = std::min(cols, n - row_first);
    first = row_first + c * group;
    count = c * group >= row_len ? 0 : std::min(group, row_len - c * group);
  }
};

template <class Elem, class Scale>
GroupPlan plan(const char* fn, const IntegerScaling<Elem, Scale>& s, std::size_t n, std::size_t cols,
               std::size_t values, std::size_t scales, ZeroPoint given, std::size_t zeros) {
  const IntegerRuleSpec spec = integer_rule_spec(s.rule);
  constexpr bool is_signed = std::numeric_limits<Elem>::is_signed;
  if (!rule_takes(s.rule, is_signed))
    fail(fn, std::string(enum_name(s.rule)) + " takes " + (spec.is_signed ? "a signed" : "an unsigned") + " element, not " +
                 std::string(Elem::descriptor.name.c_str()));
  if (!s.per_tensor && s.group_size < 0) fail(fn, "group_size " + std::to_string(s.group_size) + " is negative");
  if (n > 0 && cols == 0) fail(fn, "the row length cols is 0");
  if (values != n) fail(fn, "the output has " + std::to_string(values) + " values, expected " + std::to_string(n));
  GroupPlan p{n, cols, 0, 0, 0, s.per_tensor};
  p.groups = groups_needed(s, n, cols);
  p.group = s.group_size > 0 ? static_cast<std::size_t>(s.group_size) : cols;
  p.across = cols == 0 ? 0 : (cols + p.group - 1) / p.group;
  if (scales != p.groups)
    fail(fn, "scales has " + std::to_string(scales) + " entries, expected " + std::to_string(p.groups));
  if (given != spec.zero) {
    const char* need = spec.zero == ZeroPoint::none      ? "no zero points"
                       : spec.zero == ZeroPoint::integer ? "integer zero points (element codes)"
                                                         : "floating zero points (scale-format values)";
    fail(fn, std::string(enum_name(s.rule)) + " has " + need + ": call the overload that takes them");
  }
  if (given != ZeroPoint::none && zeros != p.groups)
    fail(fn, "zeros has " + std::to_string(zeros) + " entries, expected " + std::to_string(p.groups));
  return p;
}

// Step 1: lo, hi, amax of a group; whether it holds a NaN or an infinity.
struct Range {
  float lo = 0, hi = 0, amax = 0;
  bool nonfinite = false;
};
Range range_of(const float* x, std::size_t count) noexcept {
  Range r;
  if (count == 0) return r;
  r.lo = r.hi = x[0];
  for (std::size_t i = 0; i < count; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) r.nonfinite = true;
    r.lo = std::min(r.lo, v);
    r.hi = std::max(r.hi, v);
  }
  r.amax = std::max(-r.lo, r.hi);
  return r;
}

// Steps 2 and 3: a group's stored parameters.
template <class Elem, class Scale>
struct Params {
  Scale scale{};
  Elem zero{};         // an integer zero point
  Scale float_zero{};  // a floating one
  float s = 0, z = 0;  // the stored scale and zero point, as floats
  bool nan = false;
};

template <class Elem>
constexpr float qmin_of() noexcept { return static_cast<float>(finfo<Elem>::min); }
template <class Elem>
constexpr float qmax_of() noexcept { return static_cast<float>(finfo<Elem>::max); }

template <class Elem, class Scale>
Params<Elem, Scale> params(IntegerRule rule, const Range& r) noexcept {
  const IntegerRuleSpec spec = integer_rule_spec(rule);
  constexpr float qmin = qmin_of<Elem>(), qmax = qmax_of<Elem>();
  Params<Elem, Scale> p;
  if (r.nonfinite) {
    p.scale = std::numeric_limits<Scale>::quiet_NaN();
    p.float_zero = p.scale;
    p.s = p.z = std::numeric_limits<float>::quiet_NaN();
    p.nan = true;
    return p;
  }
  // The range the scale spans: symmetric rules' amax, asymmetric rules' [lo, hi].
  float lo = r.lo, hi = r.hi;
  if (spec.through_zero) {
    lo = std::min(lo, 0.0f);
    hi = std::max(hi, 0.0f);
  }
  if (spec.unit_if_zero && lo == 0.0f && hi == 0.0f) {
    lo = -1.0f;
    hi = 1.0f;
  }
  float s = 0;
  if (spec.zero == ZeroPoint::none) {
    const float a = spec.eps_on == Epsilon::on_amax ? std::max(r.amax, spec.eps) : r.amax;
    s = spec.restricted ? a / qmax : a / ((qmax - qmin) / 2.0f);  // restricted: qmax = 2^(b-1) - 1
  } else {
    const float range = spec.eps_on == Epsilon::on_range ? std::max(hi - lo, spec.eps) : hi - lo;
    s = range / (qmax - qmin);
  }
  if (spec.eps_on == Epsilon::on_scale) s = std::max(s, spec.eps);
  // The zero point, from the float32 scale (before it is stored).
  float z = 0;
  switch (rule) {
    case IntegerRule::gptq: z = std::clamp(round_half_even(-lo / s), qmin, qmax); break;
    case IntegerRule::awq: z = std::clamp(-round_half_even(lo / s), qmin, qmax); break;
    case IntegerRule::torchao_asymmetric: z = std::clamp(qmin - round_half_even(lo / s), qmin, qmax); break;
    case IntegerRule::tinygemm: z = lo + s * integer_mid_point<Elem>(); break;
    case IntegerRule::absmax:
    case IntegerRule::torchao_symmetric: break;
  }
  // Step 3: a scale that rounds to 0 in the scale format becomes its
  // smallest positive value (float16 below 2^-25), so that no code divides by 0.
  p.scale = convert<Scale>(s, Round::nearest_even, Overflow::saturate);
  if (static_cast<float>(p.scale) == 0.0f) p.scale = Scale::from_bits(1);
  p.s = static_cast<float>(p.scale);
  if (spec.zero == ZeroPoint::integer) {
    p.zero = Elem(z);
    p.z = z;
  } else if (spec.zero == ZeroPoint::floating) {
    p.float_zero = convert<Scale>(z, Round::nearest_even, Overflow::saturate);
    p.z = static_cast<float>(p.float_zero);
  }
  return p;
}

// Step 4: one code from the stored parameters.
template <class Elem, class Scale>
float code(const IntegerRuleSpec& spec, const Params<Elem, Scale>& p, float x) noexcept {
  constexpr float qmin = qmin_of<Elem>(), qmax = qmax_of<Elem>();
  if (spec.zero == ZeroPoint::floating) {
    const float lo = p.z - p.s * integer_mid_point<Elem>();
    return std::clamp(round_half_even((x - lo) / p.s), qmin, qmax);
  }
  // p.z is 0 without a zero point; a restricted rule never uses qmin (-128 in int8).
  const float v = spec.reciprocal ? x * (1.0f / p.s) : x / p.s;
  return std::clamp(round_half_even(v) + p.z, spec.restricted ? -qmax : qmin, qmax);
}

template <class Elem, class Scale>
void quantize_groups(const char* fn, const IntegerScaling<Elem, Scale>& s, std::span<const float> x,
                     std::size_t cols, std::span<Elem> q, std::span<Scale> scales, ZeroPoint given,
                     std::span<Elem> zeros, std::span<Scale> float_zeros) {
  const GroupPlan gp = plan(fn, s, x.size(), cols, q.size(), scales.size(), given,
                            given == ZeroPoint::integer ? zeros.size() : float_zeros.size());
  const IntegerRuleSpec spec = integer_rule_spec(s.rule);
  for (std::size_t g = 0; g < gp.groups; ++g) {
    std::size_t first = 0, count = 0;
    gp.bounds(g, first, count);
    const Params<Elem, Scale> p = params<Elem, Scale>(s.rule, range_of(x.data() + first, count));
    scales[g] = p.scale;
    if (given == ZeroPoint::integer) zeros[g] = p.zero;
    if (given == ZeroPoint::floating) float_zeros[g] = p.float_zero;
    for (std::size_t i = first; i < first + count; ++i) q[i] = p.nan ? Elem{} : Elem(code(spec, p, x[i]));
  }
}

template <class Elem, class Scale>
void dequantize_groups(const char* fn, const IntegerScaling<Elem, Scale>& s, std::span<const Elem> q,
                       std::size_t cols, std::span<const Scale> scales, ZeroPoint given, std::span<const Elem> zeros,
                       std::span<const Scale> float_zeros, std::span<float> y) {
  const GroupPlan gp = plan(fn, s, q.size(), cols, y.size(), scales.size(), given,
                            given == ZeroPoint::integer ? zeros.size() : float_zeros.size());
  constexpr float mid = integer_mid_point<Elem>();
  for (std::size_t g = 0; g < gp.groups; ++g) {
    std::size_t first = 0, count = 0;
    gp.bounds(g, first, count);
    const float sc = static_cast<float>(scales[g]);
    for (std::size_t i = first; i < first + count; ++i) {
      const float v = static_cast<float>(q[i]);
      switch (given) {
        case ZeroPoint::none: y[i] = v * sc; break;
        case ZeroPoint::integer: y[i] = (v - static_cast<float>(zeros[g])) * sc; break;
        case ZeroPoint::floating: {
          const float t = (v - mid) * sc;
          y[i] = t + static_cast<float>(float_zeros[g]);
          break;
        }
      }
    }
  }
}

// A checkpoint's geometry, checked (integer_scaling.h: checkpoint layouts).
struct CheckpointShape {
  std::size_t n = 0, k = 0, group = 0, groups = 0, bits = 0, per_word = 0;
};
constexpr std::array<int, 8> kAwqOrder = {0, 2, 4, 6, 1, 3, 5, 7};

template <class Elem, class Scale>
CheckpointShape checkpoint_shape(const char* fn, IntegerCheckpoint layout, const IntegerScaling<Elem, Scale>& s,
                                 std::size_t n, std::size_t k) {
  const std::string name(enum_name(layout));
  constexpr auto bits = static_cast<std::size_t>(finfo<Elem>::bits);
  if (std::numeric_limits<Elem>::is_signed || (layout == IntegerCheckpoint::awq ? bits != 4 : bits == 1))
    fail(fn, name + " stores " + (layout == IntegerCheckpoint::awq ? "uint4" : "uint2, uint4 or uint8") +
                 " codes, not " + std::string(Elem::descriptor.name.c_str()));
  if (integer_rule_spec(s.rule).zero != ZeroPoint::integer)
    fail(fn, name + " stores integer zero points: " + std::string(enum_name(s.rule)) + " has none");
  if (s.per_tensor) fail(fn, name + " stores groups along K, not one scale per tensor");
  if (k == 0 || n == 0) fail(fn, "an empty weight (N = " + std::to_string(n) + ", K = " + std::to_string(k) + ")");
  CheckpointShape c{n, k, s.group_size > 0 ? static_cast<std::size_t>(s.group_size) : k, 0, bits, 32 / bits};
  if (k % c.group != 0) fail(fn, name + ": K = " + std::to_string(k) + " is not a multiple of the group " + std::to_string(c.group));
  c.groups = k / c.group;
  const std::size_t n_multiple = layout == IntegerCheckpoint::awq ? 8 : c.per_word;
  if (layout != IntegerCheckpoint::awq && k % c.per_word != 0)
    fail(fn, name + ": K = " + std::to_string(k) + " is not a multiple of " + std::to_string(c.per_word));
  if (n % n_multiple != 0)
    fail(fn, name + ": N = " + std::to_string(n) + " is not a multiple of " + std::to_string(n_multiple));
  return c;
}

std::uint32_t code_bits(float v) noexcept { return static_cast<std::uint32_t>(v); }

}  // namespace

template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales) {
  quantize_groups<Elem, Scale>("quantize", s, x, cols, q, scales, ZeroPoint::none, {}, {});
}
template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
              std::span<std::type_identity_t<Elem>> zeros) {
  quantize_groups<Elem, Scale>("quantize", s, x, cols, q, scales, ZeroPoint::integer, zeros, {});
}
template <IntegerElement Elem, IntegerScale Scale>
void quantize(const IntegerScaling<Elem, Scale>& s, std::span<const float> x, std::size_t cols,
              std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
              std::span<std::type_identity_t<Scale>> float_zeros) {
  quantize_groups<Elem, Scale>("quantize", s, x, cols, q, scales, ZeroPoint::floating, {}, float_zeros);
}
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales, std::span<float> y) {
  dequantize_groups<Elem, Scale>("dequantize", s, q, cols, scales, ZeroPoint::none, {}, {}, y);
}
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales,
                std::span<const std::type_identity_t<Elem>> zeros, std::span<float> y) {
  dequantize_groups<Elem, Scale>("dequantize", s, q, cols, scales, ZeroPoint::integer, zeros, {}, y);
}
template <IntegerElement Elem, IntegerScale Scale>
void dequantize(const IntegerScaling<Elem, Scale>& s, std::span<const std::type_identity_t<Elem>> q,
                std::size_t cols, std::span<const std::type_identity_t<Scale>> scales,
                std::span<const std::type_identity_t<Scale>> float_zeros, std::span<float> y) {
  dequantize_groups<Elem, Scale>("dequantize", s, q, cols, scales, ZeroPoint::floating, {}, float_zeros, y);
}

template <IntegerElement Elem, IntegerScale Scale>
CheckpointTensors<Scale> to_checkpoint(IntegerCheckpoint layout, const IntegerScaling<Elem, Scale>& s,
                                       std::size_t k, std::span<const std::type_identity_t<Elem>> q,
                                       std::span<const std::type_identity_t<Scale>> scales,
                                       std::span<const std::type_identity_t<Elem>> zeros) {
  const char* fn = "to_checkpoint";
  if (k == 0 || q.size() % k != 0)
    fail(fn, std::to_string(q.size()) + " codes are not rows of K = " + std::to_string(k));
  const CheckpointShape c = checkpoint_shape(fn, layout, s, q.size() / k, k);
  if (scales.size() != c.n * c.groups || zeros.size() != c.n * c.groups)
    fail(fn, "scales and zeros hold " + std::to_string(scales.size()) + " and " + std::to_string(zeros.size()) +
                 " entries, expected N x K / G = " + std::to_string(c.n * c.groups));
  const bool v1 = layout == IntegerCheckpoint::gptq;
  if (v1)
    for (std::size_t i = 0; i < zeros.size(); ++i)
      if (static_cast<float>(zeros[i]) == 0.0f)
        fail(fn, "gptq stores zero - 1, and row " + std::to_string(i / c.groups) + " group " +
                     std::to_string(i % c.groups) + " has zero point 0 (AutoGPTQ writes -1 over the word's "
                     "higher codes): use gptq_v2");
  CheckpointTensors<Scale> t;
  t.n = c.n;
  t.groups = c.groups;
  std::vector<std::uint32_t> w, z;
  if (layout == IntegerCheckpoint::awq) {
    t.qweight_rows = c.k, t.qweight_cols = c.n / 8, t.qzeros_rows = c.groups, t.qzeros_cols = c.n / 8;
    w.assign(t.qweight_rows * t.qweight_cols, 0);
    z.assign(t.qzeros_rows * t.qzeros_cols, 0);
    for (std::size_t kk = 0; kk < c.k; ++kk)
      for (std::size_t col = 0; col < c.n / 8; ++col)
        for (std::size_t i = 0; i < 8; ++i)
          w[kk * t.qweight_cols + col] |= code_bits(static_cast<float>(q[(8 * col + kAwqOrder[i]) * c.k + kk])) << (4 * i);
    for (std::size_t g = 0; g < c.groups; ++g)
      for (std::size_t col = 0; col < c.n / 8; ++col)
        for (std::size_t i = 0; i < 8; ++i)
          z[g * t.qzeros_cols + col] |= code_bits(static_cast<float>(zeros[(8 * col + kAwqOrder[i]) * c.groups + g])) << (4 * i);
  } else {
    t.qweight_rows = c.k / c.per_word, t.qweight_cols = c.n, t.qzeros_rows = c.groups, t.qzeros_cols = c.n / c.per_word;
    w.assign(t.qweight_rows * t.qweight_cols, 0);
    z.assign(t.qzeros_rows * t.qzeros_cols, 0);
    for (std::size_t nn = 0; nn < c.n; ++nn)
      for (std::size_t kk = 0; kk < c.k; ++kk)
        w[(kk / c.per_word) * c.n + nn] |= code_bits(static_cast<float>(q[nn * c.k + kk])) << (c.bits * (kk % c.per_word));
    for (std::size_t nn = 0; nn < c.n; ++nn)
      for (std::size_t g = 0; g < c.groups; ++g) {
        const std::uint32_t zero = code_bits(static_cast<float>(zeros[nn * c.groups + g])) - (v1 ? 1 : 0);
        z[g * t.qzeros_cols + nn / c.per_word] |= zero << (c.bits * (nn % c.per_word));
      }
  }
  t.qweight.resize(w.size());
  t.qzeros.resize(z.size());
  std::transform(w.begin(), w.end(), t.qweight.begin(), [](std::uint32_t v) { return std::bit_cast<std::int32_t>(v); });
  std::transform(z.begin(), z.end(), t.qzeros.begin(), [](std::uint32_t v) { return std::bit_cast<std::int32_t>(v); });
  t.scales.resize(c.n * c.groups);
  for (std::size_t nn = 0; nn < c.n; ++nn)
    for (std::size_t g = 0; g < c.groups; ++g) t.scales[g * c.n + nn] = scales[nn * c.groups + g];
  return t;
}

template <IntegerElement Elem, IntegerScale Scale>
void from_checkpoint(IntegerCheckpoint layout, const IntegerScaling<Elem, Scale>& s, const CheckpointTensors<Scale>& t,
                     std::span<std::type_identity_t<Elem>> q, std::span<std::type_identity_t<Scale>> scales,
                     std::span<std::type_identity_t<Elem>> zeros) {
  const char* fn = "from_checkpoint";
  const bool awq = layout == IntegerCheckpoint::awq;
  constexpr auto bits = static_cast<std::size_t>(finfo<Elem>::bits);
  const std::size_t per_word = 32 / bits;
  const std::size_t k = awq ? t.qweight_rows : t.qweight_rows * per_word;
  const CheckpointShape c = checkpoint_shape(fn, layout, s, t.n, k);
  const std::size_t wc = awq ? c.n / 8 : c.n, zc = c.n / (awq ? 8 : per_word);
  if (t.qweight_cols != wc || t.qweight.size() != t.qweight_rows * wc || t.qzeros_rows != c.groups ||
      t.qzeros_cols != zc || t.qzeros.size() != c.groups * zc || t.scales.size() != c.n * c.groups)
    fail(fn, "the tensors' shapes do not fit N = " + std::to_string(c.n) + ", K = " + std::to_string(k) +
                 ", groups of " + std::to_string(c.group));
  if (q.size() != c.n * c.k || scales.size() != c.n * c.groups || zeros.size() != c.n * c.groups)
    fail(fn, "the outputs hold " + std::to_string(q.size()) + ", " + std::to_string(scales.size()) + " and " +
                 std::to_string(zeros.size()) + " entries, expected N x K and N x K / G");
  const std::uint32_t mask = (std::uint32_t{1} << bits) - 1;
  const auto word = [](std::int32_t v) { return std::bit_cast<std::uint32_t>(v); };
  const auto elem = [](std::uint32_t v) { return Elem(static_cast<float>(v)); };
  if (awq) {
    for (std::size_t kk = 0; kk < c.k; ++kk)
      for (std::size_t col = 0; col < wc; ++col)
        for (std::size_t i = 0; i < 8; ++i)
          q[(8 * col + kAwqOrder[i]) * c.k + kk] = elem((word(t.qweight[kk * wc + col]) >> (4 * i)) & mask);
    for (std::size_t g = 0; g < c.groups; ++g)
      for (std::size_t col = 0; col < zc; ++col)
        for (std::size_t i = 0; i < 8; ++i)
          zeros[(8 * col + kAwqOrder[i]) * c.groups + g] = elem((word(t.qzeros[g * zc + col]) >> (4 * i)) & mask);
  } else {
    const std::uint32_t add = layout == IntegerCheckpoint::gptq ? 1 : 0;  // AutoGPTQ: (zeros + 1) & mask
    for (std::size_t nn = 0; nn < c.n; ++nn)
      for (std::size_t kk = 0; kk < c.k; ++kk)
        q[nn * c.k + kk] = elem((word(t.qweight[(kk / per_word) * c.n + nn]) >> (bits * (kk % per_word))) & mask);
    for (std::size_t nn = 0; nn < c.n; ++nn)
      for (std::size_t g = 0; g < c.groups; ++g)
        zeros[nn * c.groups + g] =
            elem(((word(t.qzeros[g * zc + nn / per_word]) >> (bits * (nn % per_word))) + add) & mask);
  }
  for (std::size_t nn = 0; nn < c.n; ++nn)
    for (std::size_t g = 0; g < c.groups; ++g) scales[nn * c.groups + g] = t.scales[g * c.n + nn];
}

namespace {
// torch's pow for a float32 tensor and a scalar exponent (aten/src/ATen/native/cpu/PowKernel.cpp:
// the exponents it computes without pow).
float torch_pow(float x, float p) noexcept {
  if (p == 0.5f) return std::sqrt(x);
  if (p == 1.0f) return x;
  if (p == 0.0f) return 1.0f;
  if (p == 2.0f) return x * x;
  if (p == -0.5f) return 1.0f / std::sqrt(x);
  if (p == -1.0f) return 1.0f / x;
  if (p == -2.0f) return 1.0f / (x * x);
  return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(p)));
}
}  // namespace

void smoothquant_scales(std::span<const float> act_amax, std::span<const float> weight_amax, double alpha,
                        std::span<float> s) {
  if (act_amax.size() != weight_amax.size() || s.size() != act_amax.size())
    fail("smoothquant_scales", "act_amax, weight_amax and s hold " + std::to_string(act_amax.size()) + ", " +
                                   std::to_string(weight_amax.size()) + " and " + std::to_string(s.size()) +
                                   " channels: they must agree");
  if (!(alpha >= 0.0 && alpha <= 1.0)) fail("smoothquant_scales", "alpha must lie in [0, 1]");
  // As smooth.py's Python floats: alpha and 1 - alpha in double, each then
  // the float32 exponent of a float32 tensor's pow.
  const auto a_exp = static_cast<float>(alpha), b_exp = static_cast<float>(1.0 - alpha);
  for (std::size_t j = 0; j < s.size(); ++j) {
    const float w = std::max(weight_amax[j], 1e-5f);
    s[j] = std::max(torch_pow(act_amax[j], a_exp) / torch_pow(w, b_exp), 1e-5f);
  }
}

void column_amax(std::span<const float> m, std::size_t cols, std::span<float> amax) {
  if (cols == 0 || m.size() % cols != 0 || amax.size() != cols)
    fail("column_amax", "a matrix of " + std::to_string(m.size()) + " values is not rows of " + std::to_string(cols) +
                            ", or amax does not hold one entry per column");
  std::fill(amax.begin(), amax.end(), 0.0f);
  for (std::size_t i = 0; i < m.size(); ++i) {
    const float a = std::fabs(m[i]);
    float& t = amax[i % cols];
    if (std::isnan(a) || a > t) t = std::isnan(t) ? t : a;
  }
}

void smooth_columns(std::span<float> m, std::size_t cols, std::span<const float> s, bool divide) {
  if (cols == 0 || m.size() % cols != 0 || s.size() != cols)
    fail("smooth_columns", "a matrix of " + std::to_string(m.size()) + " values is not rows of " +
                               std::to_string(cols) + ", or s does not hold one scale per column");
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = divide ? m[i] / s[i % cols] : m[i] * s[i % cols];
}

// Every (element, scale) pair of the two lists.
#define LPLAB_INTEGER_SCALING_PAIR(S, E)                                                                        \
  template void quantize(const IntegerScaling<E, S>&, std::span<const float>, std::size_t, std::span<E>,        \
                         std::span<S>);                                                                         \
  template void quantize(const IntegerScaling<E, S>&, std::span<const float>, std::size_t, std::span<E>,        \
                         std::span<S>, std::span<E>);                                                           \
  template void quantize(const IntegerScaling<E, S>&, std::span<const float>, std::size_t, std::span<E>,        \
                         std::span<S>, std::span<S>);                                                           \
  template void dequantize(const IntegerScaling<E, S>&, std::span<const E>, std::size_t, std::span<const S>,    \
                           std::span<float>);                                                                   \
  template void dequantize(const IntegerScaling<E, S>&, std::span<const E>, std::size_t, std::span<const S>,    \
                           std::span<const E>, std::span<float>);                                               \
  template void dequantize(const IntegerScaling<E, S>&, std::span<const E>, std::size_t, std::span<const S>,    \
                           std::span<const S>, std::span<float>);                                               \
  template CheckpointTensors<S> to_checkpoint(IntegerCheckpoint, const IntegerScaling<E, S>&, std::size_t,       \
                                              std::span<const E>, std::span<const S>, std::span<const E>);       \
  template void from_checkpoint(IntegerCheckpoint, const IntegerScaling<E, S>&, const CheckpointTensors<S>&,     \
                                std::span<E>, std::span<S>, std::span<E>);
#define LPLAB_INTEGER_SCALING_ELEMENT(E, ...) LPLAB_INTEGER_SCALING_SCALES(LPLAB_INTEGER_SCALING_PAIR, E)
LPLAB_INTEGER_SCALING_ELEMENTS(LPLAB_INTEGER_SCALING_ELEMENT)
#undef LPLAB_INTEGER_SCALING_ELEMENT
#undef LPLAB_INTEGER_SCALING_PAIR

}  // namespace lplab::kernels
