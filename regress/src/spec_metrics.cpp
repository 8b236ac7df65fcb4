// The metrics of a regression check (docs/regress.md, "Metrics"): each reads
// the two arrays of a ComparedArrays element by element and returns the measured
// value, whether it is within the limit, and the worst element.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "lplab/regress/spec.h"
#include "lplab/lab/vocabulary.h"

namespace lplab::experiments {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string value_text(double v) { return result_number(v); }

std::string worst_text(std::size_t i, double a, double e) {
  return fmt::format("worst at index {}: actual {}, expected {}", i, value_text(a), value_text(e));
}

// A code's place on the number line: codes of the same sign are ordered by
// their magnitude bits (IEEE 754-2019 section 3.4's encoding, which every
// lplab format follows), so ordinal(+x) = magnitude and ordinal(-x) =
// -magnitude, and the two zeros share ordinal 0. E8M0 has no sign bit.
std::int64_t ordinal(const FormatEntry& f, std::uint64_t code) {
  if (!f.info.is_signed) return static_cast<std::int64_t>(code);
  const std::uint64_t sign = std::uint64_t{1} << (f.info.bits - 1);
  const auto magnitude = static_cast<std::int64_t>(code & (sign - 1));
  return (code & sign) != 0 ? -magnitude : magnitude;
}

Measurement assert_close(const Metric& m, const ComparedArrays& s) {
  // torch.testing.assert_close (torch.isclose): equal values match
  // (infinities of the same sign included); two NaNs match only with
  // equal_nan; otherwise |actual - expected| <= atol + rtol * |expected|.
  std::size_t mismatched = 0, worst = 0;
  double worst_ratio = -1;
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    const double a = s.actual[i], e = s.expected[i];
    double ratio = 0;  // |a - e| over the allowance: above 1 fails
    if (a == e || (m.equal_nan && std::isnan(a) && std::isnan(e))) {
      ratio = 0;
    } else if (!std::isfinite(a) || !std::isfinite(e)) {
      ratio = kInf;
    } else {
      const double diff = std::abs(a - e), allowed = m.atol + m.rtol * std::abs(e);
      if (diff <= allowed) ratio = allowed == 0 ? 0 : diff / allowed;
      else ratio = allowed == 0 ? kInf : std::max(diff / allowed, std::nextafter(1.0, 2.0));
    }
    if (ratio > 1) ++mismatched;
    if (ratio > worst_ratio) worst_ratio = ratio, worst = i;
  }
  const std::size_t n = s.actual.size();
  Measurement r;
  r.measured = n == 0 ? 0 : static_cast<double>(mismatched) / static_cast<double>(n);
  r.passed = r.measured <= m.limit;
  r.detail = fmt::format("{} of {} mismatched (rtol {}, atol {})", mismatched, n, shortest(m.rtol), shortest(m.atol));
  if (mismatched > 0) r.detail += "; " + worst_text(worst, s.actual[worst], s.expected[worst]);
  return r;
}

Measurement max_ulp(const Metric& m, const ComparedArrays& s) {
  // numpy.testing.assert_array_max_ulp counts the representable numbers
  // between the two; here both are rounded to nearest-even into the format
  // (IEEE overflow), then their codes' ordinals are subtracted. Two NaNs are
  // 0 apart; a NaN and a number infinitely far -- tested on the values
  // themselves, since a format without NaN saturates one. A value that
  // overflows the format is infinitely far from one that does not, and from
  // a different one that overflows too (the overflow flag, IEEE 754-2019
  // section 7.4): rounded into the format, 1e6 and 1e3 would share E4M3's
  // NaN code.
  const FormatEntry& f = *m.format;
  double most = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    const double a = s.actual[i], e = s.expected[i];
    double d = 0;
    if (std::isnan(a) || std::isnan(e)) {
      d = std::isnan(a) && std::isnan(e) ? 0 : kInf;
    } else {
      Flags fa, fe;
      const std::uint64_t ca = f.from_double(a, Round::nearest_even, Overflow::ieee, 0, &fa);
      const std::uint64_t ce = f.from_double(e, Round::nearest_even, Overflow::ieee, 0, &fe);
      const bool na = std::isnan(f.to_double(ca)), ne = std::isnan(f.to_double(ce));
      if (fa.overflow() != fe.overflow() || (fa.overflow() && a != e)) d = kInf;
      else if (na || ne) d = na && ne ? 0 : kInf;
      else d = static_cast<double>(std::abs(ordinal(f, ca) - ordinal(f, ce)));
    }
    if (d > most) most = d, worst = i;
  }
  Measurement r;
  r.measured = most;
  r.passed = most <= m.limit;
  r.detail = fmt::format("ULPs of {}", f.name);
  if (most > 0) r.detail += "; " + worst_text(worst, s.actual[worst], s.expected[worst]);
  return r;
}

// A 2-norm without overflow or underflow in between (after LAPACK's dnrm2,
// here in two passes): the largest magnitude's power of two 2^scale first,
// then the sum of squares of the values times 2^-scale. The scaling by a
// power of two is exact, so where the plain sum neither overflows nor
// underflows the result is the plain one's (a term too small to change the
// sum may be lost instead of rounded away). Infinite and NaN elements are
// kept apart.
class Norm2 {
 public:
  // Pass 1: every element, for the scale; a finite difference whose
  // subtraction overflows double comes as its two halves' difference, with
  // `twice` set (its value is 2x).
  void see(double x, bool twice = false) {
    if (std::isnan(x)) nan_ = true;
    else if (std::isinf(x)) inf_ = true;
    else if (x != 0) scale_ = std::max(scale_, std::ilogb(x) + (twice ? 1 : 0));
  }
  // Pass 2: every element again, as in pass 1.
  void add(double x, bool twice = false) {
    if (!std::isfinite(x) || x == 0) return;
    const double y = std::ldexp(x, (twice ? 1 : 0) - scale_);
    sum_ += y * y;
  }
  bool nan() const { return nan_; }
  bool inf() const { return !nan_ && inf_; }
  bool zero() const { return !nan_ && !inf_ && sum_ == 0; }
  // ||x|| = sqrt(sum) * 2^scale; the log of ||x||^2 in decibels.
  double sum() const { return sum_; }
  int scale() const { return scale_; }
  // ||x||^2 for the detail line: a decimal, or "S * 2^E" where double
  // cannot hold it.
  std::string power_text() const {
    if (nan_) return "nan";
    if (inf_) return "inf";
    const double p = std::ldexp(sum_, 2 * scale_);
    if (sum_ == 0 || std::isnormal(p)) return shortest(p);
    return fmt::format("{} * 2^{}", shortest(sum_), 2 * scale_);
  }

 private:
  bool nan_ = false, inf_ = false;
  int scale_ = std::numeric_limits<int>::min() / 4;
  double sum_ = 0;
};

// The norms of expected and of actual - expected (0 where the two are
// equal, so that equal infinities add nothing).
struct Norms {
  Norm2 signal, noise;
};

Norms norms(const ComparedArrays& s) {
  Norms n;
  auto difference = [](double a, double e, bool& twice) {
    twice = false;
    if (a == e) return 0.0;
    const double d = a - e;
    if (std::isinf(d) && std::isfinite(a) && std::isfinite(e)) {
      twice = true;
      return a / 2 - e / 2;
    }
    return d;
  };
  bool twice = false;
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    n.signal.see(s.expected[i]);
    const double d = difference(s.actual[i], s.expected[i], twice);
    n.noise.see(d, twice);
  }
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    n.signal.add(s.expected[i]);
    const double d = difference(s.actual[i], s.expected[i], twice);
    n.noise.add(d, twice);
  }
  return n;
}

Measurement sqnr_db(const Metric& m, const ComparedArrays& s) {
  // 10 log10(sum expected^2 / sum (actual - expected)^2): +inf when the two
  // are equal, NaN (a failure) when a NaN is in either.
  const Norms n = norms(s);
  const Norm2 &signal = n.signal, &noise = n.noise;
  Measurement r;
  if (signal.nan() || noise.nan()) r.measured = std::numeric_limits<double>::quiet_NaN();
  else if (noise.zero()) r.measured = kInf;
  else if (signal.inf() && noise.inf()) r.measured = std::numeric_limits<double>::quiet_NaN();
  else if (noise.inf() || signal.zero()) r.measured = -kInf;
  else if (signal.inf()) r.measured = kInf;
  else {
    // The ratio of the scaled sums times 2^(2 (scale difference)): the plain
    // power ratio where that is a normal double, else its logarithm in parts.
    const double ratio = signal.sum() / noise.sum();
    const int shift = 2 * (signal.scale() - noise.scale());
    const double whole = std::ldexp(ratio, shift);
    r.measured = std::isnormal(whole) ? 10 * std::log10(whole)
                                      : 10 * std::log10(ratio) + 10 * std::log10(2.0) * static_cast<double>(shift);
  }
  r.passed = r.measured >= m.limit;  // false for NaN
  r.detail = fmt::format("signal power {}, noise power {}", signal.power_text(), noise.power_text());
  return r;
}

// |actual - expected| / |expected| per element: 0 where they are equal (two
// zeros, two equal infinities, two NaNs), +inf where expected is 0 or not
// finite and actual differs, or where either is NaN.
double relative(double a, double e) {
  if (a == e || (std::isnan(a) && std::isnan(e))) return 0;
  if (e == 0 || !std::isfinite(e) || std::isnan(a)) return kInf;
  return std::abs(a - e) / std::abs(e);
}

double absolute(double a, double e) {
  if (a == e || (std::isnan(a) && std::isnan(e))) return 0;
  if (std::isnan(a) || std::isnan(e)) return kInf;
  return std::abs(a - e);
}

template <class F>
Measurement max_elementwise(const Metric& m, const ComparedArrays& s, F error) {
  double most = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    const double d = error(s.actual[i], s.expected[i]);
    if (d > most) most = d, worst = i;
  }
  Measurement r;
  r.measured = most;
  r.passed = most <= m.limit;
  if (most > 0) r.detail = worst_text(worst, s.actual[worst], s.expected[worst]);
  return r;
}

Measurement norm_rel_err(const Metric& m, const ComparedArrays& s) {
  // ||actual - expected||_2 / ||expected||_2; 0 when equal, +inf when the
  // reference is all zeros and actual is not, NaN (a failure) for NaNs.
  const Norms n = norms(s);
  const Norm2 &ref = n.signal, &diff = n.noise;
  Measurement r;
  if (ref.nan() || diff.nan()) r.measured = std::numeric_limits<double>::quiet_NaN();
  else if (diff.zero()) r.measured = 0;
  else if (diff.inf() && ref.inf()) r.measured = std::numeric_limits<double>::quiet_NaN();
  else if (diff.inf() || ref.zero()) r.measured = kInf;
  else if (ref.inf()) r.measured = 0;
  else r.measured = std::ldexp(std::sqrt(diff.sum() / ref.sum()), diff.scale() - ref.scale());
  r.passed = r.measured <= m.limit;
  return r;
}

// A fraction of counted elements: `counted` decides the denominator,
// `hit` the numerator.
template <class Counted, class Hit>
Measurement fraction(const Metric& m, const ComparedArrays& s, const char* what, Counted counted, Hit hit) {
  std::size_t total = 0, hits = 0, first = 0;
  for (std::size_t i = 0; i < s.actual.size(); ++i) {
    if (!counted(i)) continue;
    ++total;
    if (hit(i) && hits++ == 0) first = i;
  }
  Measurement r;
  r.measured = total == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(total);
  r.passed = r.measured <= m.limit;
  r.detail = fmt::format("{} of {} {}", hits, total, what);
  if (hits > 0)
    r.detail += fmt::format("; first at index {}: actual {}, expected {}", first, value_text(s.actual[first]),
                            value_text(s.expected[first]));
  return r;
}

}  // namespace

std::string result_number(double v) { return std::isnan(v) ? "nan" : shortest(v); }

Measurement measure(const Metric& m, const ComparedArrays& s) {
  switch (m.kind) {
    case MetricKind::assert_close: return assert_close(m, s);
    case MetricKind::max_ulp: return max_ulp(m, s);
    case MetricKind::sqnr_db: return sqnr_db(m, s);
    case MetricKind::max_rel_err: return max_elementwise(m, s, relative);
    case MetricKind::max_abs_err: return max_elementwise(m, s, absolute);
    case MetricKind::norm_rel_err: return norm_rel_err(m, s);
    case MetricKind::underflow_fraction:
      // Underflow: a finite nonzero expected value whose actual value is
      // zero (either sign), over the finite nonzero expected values.
      return fraction(
          m, s, "nonzero values became zero",
          [&](std::size_t i) { return std::isfinite(s.expected[i]) && s.expected[i] != 0; },
          [&](std::size_t i) { return s.actual[i] == 0; });
    case MetricKind::overflow_fraction: {
      // Overflow: a finite expected value whose actual value is infinite or
      // NaN -- or, for a conversion, whose conversion signalled overflow
      // (saturated by the policy, a directed rounding or a format without
      // infinity) -- over the finite expected values.
      return fraction(
          m, s, "finite values overflowed", [&](std::size_t i) { return std::isfinite(s.expected[i]); },
          [&](std::size_t i) { return s.overflowed.empty() ? !std::isfinite(s.actual[i]) : bool(s.overflowed[i]); });
    }
    case MetricKind::mismatch_fraction:
      // Any difference, over all elements; two NaNs are equal, +0 and -0 too.
      return fraction(
          m, s, "elements differ", [](std::size_t) { return true; },
          [&](std::size_t i) {
            return !(s.actual[i] == s.expected[i] || (std::isnan(s.actual[i]) && std::isnan(s.expected[i])));
          });
  }
  return {};
}

}  // namespace lplab::experiments
