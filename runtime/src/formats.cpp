#include "lplab/runtime/formats.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <mutex>
#include <utility>

#include "lplab/runtime/text.h"
#include "lplab/kernels/random.h"

namespace lplab::runtime {
namespace {

template <class T>
FormatEntry entry(std::string_view description) {
  FormatEntry e{T::descriptor.name.c_str(), description, finfo<T>::values};
  e.id = kernels::format_id<T>;
  e.compiled = {[](double x, Round rd, Overflow o, std::uint32_t random, Flags* f) -> std::uint64_t {
                  return convert<T>(x, rd, o, f, random).bits();
                },
                [](const Decimal& x, Round rd, Overflow o, std::uint32_t random, Flags* f) -> std::uint64_t {
                  return convert<T>(x, rd, o, f, random).bits();
                },
                [](std::uint64_t c) { return static_cast<double>(T::from_bits(c)); },
                [](std::uint64_t c) { return to_string(T::from_bits(c)); }};
  return e;
}

// The catalog, one entry per format, in its order (visit_format relies on it).
const std::array<FormatEntry, all_formats::size>& table() {
  static const std::array<FormatEntry, all_formats::size> t = {{
#define LPLAB_ENTRY(type, names, description) entry<type>(description),
      LPLAB_FORMAT_CATALOG(LPLAB_ENTRY)
#undef LPLAB_ENTRY
  }};
  return t;
}

}  // namespace

std::span<const FormatEntry> formats() { return table(); }

std::vector<std::string> format_names() {
  std::vector<std::string> out;
  for (const FormatEntry& e : table()) out.emplace_back(e.name);
  return out;
}

std::vector<const FormatEntry*> format_group(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> groups[] = {
      {"fp8", "float8_"}, {"float8", "float8_"}, {"fp6", "float6_"}, {"float6", "float6_"}};
  std::vector<const FormatEntry*> out;
  for (const auto& [group, prefix] : groups)
    if (name == group)
      for (const FormatEntry& e : table())
        if (e.name.starts_with(prefix)) out.push_back(&e);
  return out;
}

namespace {

// Short names: the catalog's (PyTorch's and ml_dtypes' spellings and the
// element layouts), each paired with its format.
const std::vector<std::pair<std::string_view, std::string_view>>& alias_table() {
  static const std::vector<std::pair<std::string_view, std::string_view>> t = [] {
    std::vector<std::pair<std::string_view, std::string_view>> out;
    const auto add = [&](std::string_view names, std::string_view format) {
      for (std::size_t at = 0; at < names.size();) {
        const std::size_t end = std::min(names.find(' ', at), names.size());
        if (end > at) out.emplace_back(names.substr(at, end - at), format);
        at = end + 1;
      }
    };
#define LPLAB_ALIASES(type, names, description) add(names, #type);
    LPLAB_FORMAT_CATALOG(LPLAB_ALIASES)
#undef LPLAB_ALIASES
    return out;
  }();
  return t;
}

std::string names_of(const std::vector<const FormatEntry*>& fs) {
  std::string s;
  for (const FormatEntry* e : fs) s += (s.empty() ? "" : ", ") + std::string(e->name);
  return s;
}

// One edit (insert, delete or replace a character) turns a into b.
bool one_edit_apart(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.size() - a.size() > 1) return false;
  std::size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  const std::size_t skip_b = i + 1, skip_a = a.size() == b.size() ? i + 1 : i;
  return a.substr(std::min(skip_a, a.size())) == b.substr(std::min(skip_b, b.size()));
}

// What a spelling says, for comparing spellings: lower case, without '_',
// '-' and '.', and without a leading width ("fp8", "float8", "f8"), so that
// fp8_e4m3, FP8-E4M3 and float8_e4m3 all say e4m3. A name that is only a
// width (fp16) keeps it.
std::string spelling_core(std::string_view name) {
  std::string s;
  for (char c : name)
    if (c != '_' && c != '-' && c != '.') s += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::string_view width : {"float", "fp", "f"}) {
    if (!s.starts_with(width) || s.size() == width.size() || !digit(s[width.size()])) continue;
    std::size_t end = width.size();
    while (end < s.size() && digit(s[end])) ++end;
    return end < s.size() ? s.substr(end) : s;
  }
  return s;
}

[[noreturn]] void unknown(std::string_view name) {
  std::vector<std::string> near;
  std::vector<std::string_view> targets;  // one suggestion a format
  const auto suggest = [&](std::string_view spelling, std::string_view format) {
    if (std::find(targets.begin(), targets.end(), format) != targets.end()) return;
    targets.push_back(format);
    near.emplace_back(spelling);
  };
  if (!name.empty()) {
    // The same spelling but for case, separators and a width prefix
    // (fp8_e4m3: e4m3 or float8_e4m3), then one edit from a name, or from
    // its core where no core matched (float1: float16; fp8_e4m3fnu: e4m3fn,
    // e4m3fnuz).
    const std::string core = spelling_core(name);
    for (const auto& [alias, target] : alias_table())
      if (spelling_core(alias) == core) suggest(alias, target);
    for (const FormatEntry& e : table())
      if (spelling_core(e.name) == core) suggest(e.name, e.name);
    const bool same_core = !near.empty();
    for (const FormatEntry& e : table())
      if (e.name.starts_with(name) || one_edit_apart(name, e.name)) suggest(e.name, e.name);
    for (const auto& [alias, target] : alias_table())
      if (one_edit_apart(name, alias) || (!same_core && core.size() >= 4 && one_edit_apart(core, spelling_core(alias))))
        suggest(alias, target);
  }
  throw UsageError(near.empty() ? fmt::format("unknown format '{}' (see 'lplab formats')", shown(name))
                                : fmt::format("unknown format '{}' (did you mean {}?)", shown(name), fmt::join(near, ", ")));
}

// A layout's text: "e<digits>m<digits>", alone or before a ':'.
bool is_layout(std::string_view name) {
  const std::size_t m = name.find('m'), end = std::min(name.find(':'), name.size());
  const auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return name.starts_with('e') && m != std::string_view::npos && m < end && digits(name.substr(1, m - 1)) &&
         digits(name.substr(m + 1, end - m - 1));
}

// The entry of a layout: the compiled format with that descriptor, or a
// declared one, made once per canonical name and kept for the process.
const FormatEntry& declared_entry(std::string_view name) {
  std::string why;
  const std::optional<DeclaredFormat> f = DeclaredFormat::parse(name, &why);
  if (!f) throw UsageError(fmt::format("format '{}': {}", shown(name), why));
  const auto same_layout = [&](const Descriptor& d) {
    Descriptor a = d, b = f->descriptor();
    a.name = b.name = {};
    return a == b;
  };
  for (const FormatEntry& e : table())
    if (e.declared == nullptr && same_layout(visit_format(e, []<class T>(std::type_identity<T>) { return T::descriptor; })))
      return e;
  struct Declared {
    DeclaredFormat format;
    FormatEntry entry;
  };
  static std::mutex mutex;
  static std::deque<Declared> made;
  const std::lock_guard lock(mutex);
  for (const Declared& d : made)
    if (d.format.name() == f->name()) return d.entry;
  Declared& d = made.emplace_back(Declared{*f, {}});
  d.entry.name = d.format.name();
  d.entry.description = "declared by its layout";
  d.entry.info = d.format.finfo();
  d.entry.declared = &d.format;
  return d.entry;
}

}  // namespace

void require_compiled(const FormatEntry& e, std::string_view where, std::string_view who, std::string_view also) {
  if (e.declared != nullptr)
    throw UsageError(fmt::format("{}: {} is a declared format; {} takes the compiled formats ('lplab formats'). "
                                 "declared formats work in {}inspect, finfo, values, --input-dtype and specs",
                                 where, e.name, who, also.empty() ? std::string() : std::string(also) + ", "));
}

void for_each_rounded(const FormatEntry& e, std::span<const double> x, const kernels::ConvertOptions& options,
                      const std::function<void(std::size_t first, std::span<const double> y)>& visit) {
  // Chunks of 2^22 elements (32 MiB of doubles): the kernels still split
  // each across threads (2^18 elements a thread at least).
  constexpr std::size_t kChunk = std::size_t{1} << 22;
  std::vector<double> y(std::min(kChunk, x.size()));
  for (std::size_t first = 0; first < x.size(); first += kChunk) {
    const std::span<const double> in = x.subspan(first, std::min(kChunk, x.size() - first));
    const std::span<double> out(y.data(), in.size());
    kernels::ConvertOptions o = options;
    o.first_index += first;
    if (e.declared != nullptr) {
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::uint32_t bits = o.round == Round::stochastic ? kernels::stochastic_bits(o.seed, o.first_index + i) : 0;
        Flags f;
        out[i] = e.to_double(e.from_double(in[i], o.round, o.overflow, bits, o.stats != nullptr ? &f : nullptr));
        if (o.stats != nullptr) o.stats->add(f);
      }
    } else {
      visit_format(e, [&]<class T>(std::type_identity<T>) {
        std::vector<T> codes(in.size());
        kernels::convert(in, std::span<T>(codes), o);
        for (std::size_t i = 0; i < in.size(); ++i) out[i] = static_cast<double>(codes[i]);
      });
    }
    visit(first, out);
  }
}

const FormatEntry& resolve_format(std::string_view name) {
  if (const FormatEntry* e = find_format(name)) return *e;
  if (is_layout(name)) return declared_entry(name);
  if (const auto members = format_group(name); !members.empty())
    throw UsageError(fmt::format("'{}' is a group of {} formats ({}); name one", name, members.size(),
                                 names_of(members)));
  unknown(name);
}

std::vector<const FormatEntry*> resolve_format_list(const std::vector<std::string>& names) {
  std::vector<const FormatEntry*> out;
  const auto add = [&out](const FormatEntry* e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  // Group names are neither format names, aliases nor layouts: every other
  // name resolves as one format.
  for (const std::string& n : names) {
    if (const auto members = format_group(n); !members.empty()) {
      for (const FormatEntry* m : members) add(m);
    } else {
      add(&resolve_format(n));
    }
  }
  return out;
}

const FormatEntry* find_format(std::string_view name) {
  const auto canonical = [](std::string_view n) -> const FormatEntry* {
    for (const FormatEntry& e : table())
      if (e.name == n) return &e;
    return nullptr;
  };
  // Canonical names first: the common spelling, and a Python call's (the
  // package passes canonical names) costs no alias scan. An alias names its
  // format by the canonical name.
  if (const FormatEntry* e = canonical(name)) return e;
  for (const auto& [alias, target] : alias_table())
    if (name == alias) return canonical(target);
  return nullptr;
}

kernels::OperandRange operand_range(const FormatEntry& e) {
  return kernels::operand_range(e.info.bits, e.info.nmant, e.info.minexp, e.info.maxexp, e.info.has_subnormals);
}

int output_precision(const FormatEntry& e) { return e.info.nmant + 1; }

void check_overflow(const FormatEntry& e, Overflow o) {
  if (o != Overflow::wrap || e.info.encoding == Encoding::integer) return;
  std::vector<std::string_view> integers;  // the catalog's, in its order
  for (const FormatEntry& f : formats())
    if (f.info.encoding == Encoding::integer) integers.push_back(f.name);
  throw UsageError(fmt::format("overflow 'wrap' keeps an integer's low bits; {} is not an integer format ({}): "
                               "ieee or saturate",
                               e.name, fmt::join(integers, ", ")));
}

std::string matmul_operand_problem(const FormatEntry& e) {
  if (e.info.bits > 16 || e.info.mantissa_bits == 0)
    return fmt::format("{} is not a matmul input format here (16-bit or narrower, with a mantissa)", e.name);
  // float: 2^-149 is the smallest subnormal, every value below 2^128.
  const kernels::OperandRange r = operand_range(e);
  if (r.quantum_exp < -149 || e.info.maxexp > 128)
    return fmt::format("{} is not a matmul input format here: its values span 2^{} to below 2^{}, and the kernels "
                       "decode operands to float (2^-149 to below 2^128)",
                       e.name, r.quantum_exp, e.info.maxexp);
  return {};
}

std::vector<float> matmul_operand_values(const FormatEntry& e, std::span<const double> x, std::size_t& changed) {
  std::vector<float> out(x.size());
  changed = 0;
  for_each_rounded(e, x, kernels::ConvertOptions{}, [&](std::size_t first, std::span<const double> y) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double v = x[first + i];
      out[first + i] = static_cast<float>(y[i]);
      changed += !(y[i] == v || (std::isnan(y[i]) && std::isnan(v)));
    }
  });
  return out;
}

}  // namespace lplab::runtime
