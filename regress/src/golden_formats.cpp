// Baselines of the formats: finfo of every format, the value of every code of
// every format of at most 16 bits, and conversions at each format's boundaries
// under every policy (scalar, and the bulk kernel beside it).
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "lplab/lab/vocabulary.h"
#include "lplab/regress/golden.h"
#include "lplab/kernels/convert.h"

namespace lplab::experiments::golden_detail {
namespace {

std::string hex(std::uint64_t code, int bits) {
  return fmt::format("0x{:0{}x}", code, (bits + 3) / 4);
}

// FNV-1a, 64 bits (the offset basis and prime of the FNV specification).
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  }
  std::string text() const { return fmt::format("{:016x}", h); }
};

}  // namespace

// The baseline's fields, in its order (LPLAB_FINFO_FIELDS, but encoding after
// bias), and those it leaves out: adding one changes every format's entries,
// so each is placed on purpose (checked below).
constexpr std::string_view kFinfoBaselineFields[] = {
    "bits", "exponent_bits", "mantissa_bits", "bias", "encoding", "is_signed", "has_infinity", "has_nan",
    "has_negative_zero", "has_subnormals", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
    "smallest_subnormal", "resolution_torch", "resolution_numpy", "machep", "negep", "nmant", "nexp", "iexp",
    "maxexp", "minexp", "precision", "digits10", "overflow_threshold", "threshold_tie_overflows", "nan_code",
    "inf_code", "nan_codes", "finite_codes", "finite_values", "normal_binades", "binades"};
constexpr std::string_view kFinfoBaselineOmitted[] = {"has_zero", "max_code"};
static_assert(finfo_fields_placed(kFinfoBaselineFields, kFinfoBaselineOmitted),
              "every finfo field (LPLAB_FINFO_FIELDS) is placed once in the finfo baseline's fields or left out: "
              "place a new one (and update tests/regression/finfo.txt)");

GoldenFile finfo_suite() {
  GoldenFile f{"finfo", "finfo of every format (as `lplab finfo` prints it)", {}, {}};
  for (const FormatEntry& e : formats()) {
    const std::string n(e.name);
    for (std::string_view field : kFinfoBaselineFields)
      visit_finfo_field(e.info, field, [&]<class V>(const V& v) {
        std::string text;
        if constexpr (std::is_same_v<V, double>) text = shortest(v);
        else if constexpr (std::is_same_v<V, bool>) text = v ? "true" : "false";
        else if constexpr (std::is_same_v<V, Encoding>) text = encoding_name(v);
        else if constexpr (std::is_same_v<V, FinfoCode>) text = hex(v.code, v.bits);
        else text = std::to_string(v);  // int, a count
        f.entries.push_back({n + "." + std::string(field), std::move(text)});
      });
  }
  return f;
}

GoldenFile values_suite() {
  // Formats of 8 bits or fewer list every code; the 16-bit ones a hash of
  // each run of 256 codes (which says where a change is) and a sample.
  constexpr int kChunk = 256;
  GoldenFile f{"values",
               "the value of every code of every format of at most 16 bits",
               {"NAME.hash: FNV-1a 64 of the lines 'CODE VALUE\\n' of all codes, VALUE the "
                "shortest round-trip decimal of the code's exact value",
                "NAME.hash[A..B]: the same over codes A to B; NAME[CODE]: one code's value "
                "(every code up to 8 bits; codes ending in 00, 01 or ff for 16 bits)"},
               {}};
  for (const FormatEntry& e : formats()) {
    const int bits = e.info.bits;
    if (bits > 16) continue;
    const std::string n(e.name);
    const std::uint64_t count = std::uint64_t{1} << bits;
    Fnv all, chunk;
    std::vector<GoldenEntry> chunks, samples;
    for (std::uint64_t c = 0; c < count; ++c) {
      const std::string value = shortest(e.to_double(c));
      const std::string line = fmt::format("{} {}\n", hex(c, bits), value);
      all.add(line);
      chunk.add(line);
      if (bits > 8 && (c + 1) % kChunk == 0) {
        chunks.push_back({fmt::format("{}.hash[{}..{}]", n, hex(c + 1 - kChunk, bits), hex(c, bits)),
                          chunk.text()});
        chunk = Fnv{};
      }
      const std::uint64_t low = c & 0xFF;
      if (bits <= 8 || low == 0x00 || low == 0x01 || low == 0xFF)
        samples.push_back({fmt::format("{}[{}]", n, hex(c, bits)), value});
    }
    f.entries.push_back({n + ".hash", all.text()});
    f.entries.insert(f.entries.end(), chunks.begin(), chunks.end());
    f.entries.insert(f.entries.end(), samples.begin(), samples.end());
  }
  return f;
}

namespace {

struct Probe {
  std::string label;
  double x;
};

// The inputs that decide a format's rounding: its largest value and the
// overflow threshold (the tie above it) with neighbours on both sides, the
// smallest normal and subnormal values with the ties below them, and ties
// between 1 and its neighbours; each with both signs.
std::vector<Probe> probes(const FinfoValues& i) {
  const double max = i.max, t = i.overflow_threshold;
  const double gap = (t - max) / 64;  // well inside the half-ulp above max
  // The spacing of the smallest values: the subnormal quantum, or for a
  // format without subnormals the spacing just above the smallest normal.
  const double q = i.has_subnormals ? i.smallest_subnormal : i.smallest_normal * i.eps;
  const double s = i.smallest_normal;
  const double eps = i.eps;
  std::vector<Probe> p = {
      {"zero", 0.0},
      {"one", 1.0},
      {"one+eps/4", 1.0 + eps / 4},
      {"one+eps/2 (tie)", 1.0 + eps / 2},
      {"one+3eps/2 (tie)", 1.0 + 3 * eps / 2},
      {"max", max},
      {"threshold-gap", t - gap},
      {"threshold (tie)", t},
      {"threshold+gap", t + gap},
      {"2max", 2 * max},
      {"smallest_normal", s},
      {"smallest_normal-q/2 (tie)", s - q / 2},
      {"q", q},
      {"q/2 (tie)", q / 2},
      {"q/4", q / 4},
      {"3q/4", 3 * q / 4},
      {"3q/2 (tie)", 3 * q / 2},
      {"inf", std::numeric_limits<double>::infinity()},
      {"nan", std::numeric_limits<double>::quiet_NaN()},
  };
  const std::size_t n = p.size();
  for (std::size_t k = 0; k < n; ++k) p.push_back({"-" + p[k].label, -p[k].x});
  return p;
}

struct PolicyCase {
  std::string name;
  Round round;
  Overflow overflow;
  std::uint32_t random;
};

std::vector<PolicyCase> policies() {
  std::vector<PolicyCase> out;
  for (Round r : kRounds) {
    if (r == Round::stochastic) continue;  // below, with chosen random bits
    for (Overflow o : kOverflows) out.push_back({fmt::format("{} {}", round_name(r), overflow_name(o)), r, o, 0});
  }
  // Stochastic rounding is deterministic given its random bits R: the
  // extremes and the middle of R's range.
  for (std::uint32_t r : {0x00000000u, 0x7fffffffu, 0x80000000u, 0xffffffffu})
    out.push_back({fmt::format("stochastic(R={:#010x}) ieee", r), Round::stochastic,
                   Overflow::ieee, r});
  return out;
}

}  // namespace

GoldenFile conversions_suite() {
  GoldenFile f{"conversions",
               "binary64 inputs at each format's boundaries, rounded under every policy",
               {"FORMAT POLICY INPUT (value) = CODE VALUE FLAGS; q is the spacing of the "
                "smallest values (the subnormal quantum)",
                "where the input is a float, the bulk kernel (lplab::kernels::convert) runs "
                "beside the scalar conversion and a difference is written into the value"},
               {}};
  for (const FormatEntry& e : formats()) {
    const std::vector<Probe> ps = probes(e.info);
    for (const PolicyCase& pc : policies()) {
      // The bulk kernel on the inputs that are floats (stochastic rounding's
      // bits come from a seed there, so it is compared for the others only).
      std::vector<float> in;
      for (const Probe& p : ps)
        if (static_cast<double>(static_cast<float>(p.x)) == p.x || std::isnan(p.x))
          in.push_back(static_cast<float>(p.x));
      std::vector<std::uint64_t> bulk(in.size());
      if (pc.round != Round::stochastic) {
        visit_format(e, [&]<class T>(std::type_identity<T>) {
          std::vector<T> out(in.size());
          kernels::convert<float, T>(std::span<const float>(in), std::span<T>(out),
                                     {.round = pc.round, .overflow = pc.overflow});
          for (std::size_t k = 0; k < out.size(); ++k) bulk[k] = out[k].bits();
        });
      }
      std::size_t next_float = 0;
      for (const Probe& p : ps) {
        Flags flags;
        const std::uint64_t code = e.from_double(p.x, pc.round, pc.overflow, pc.random, &flags);
        std::string value = fmt::format("{} {} {}", hex(code, e.info.bits),
                                        shortest(e.to_double(code)), flags_text(flags));
        const bool is_float = static_cast<double>(static_cast<float>(p.x)) == p.x || std::isnan(p.x);
        if (is_float) {
          if (pc.round != Round::stochastic && bulk[next_float] != code)
            value += fmt::format(" BULK-DIFFERS {}", hex(bulk[next_float], e.info.bits));
          ++next_float;
        }
        f.entries.push_back(
            {fmt::format("{} {} {} ({})", e.name, pc.name, p.label, shortest(p.x)), value});
      }
    }
  }
  return f;
}

}  // namespace lplab::experiments::golden_detail
