#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lplab/lab/experiment.h"

namespace lplab::experiments {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    items.push_back(trim(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

// A finite number within [min, max]; integers must be whole (1e6 is fine).
double checked_number(const std::string& text, const ParamSpec& p, std::string_view experiment,
                      bool integer) {
  const std::string where = fmt::format("{} parameter {}", experiment, p.name);
  Decimal d;
  try {
    d = parse_value(text);
  } catch (const UsageError&) {
    throw UsageError(fmt::format("{}: '{}' is not a number", where, text));
  }
  if (d.kind == ValueKind::nan || d.kind == ValueKind::infinite)
    throw UsageError(fmt::format("{}: '{}' is not finite", where, text));
  // The double nearest the number: beyond double's range, inf or 0, which the
  // range check below refuses or (0 within the range) takes as the nearest.
  const double v = d.nearest;
  if (integer && v != std::floor(v))
    throw UsageError(fmt::format("{}: '{}' is not a whole number", where, text));
  if (!(v >= p.min && v <= p.max))
    throw UsageError(fmt::format("{}: {} is outside [{}, {}]", where, text, shortest(p.min),
                                 shortest(p.max)));
  return v;
}

void check_choice(const std::string& item, const ParamSpec& p, std::string_view experiment) {
  if (p.choices.empty()) return;
  if (std::find(p.choices.begin(), p.choices.end(), item) == p.choices.end())
    throw UsageError(fmt::format("{} parameter {}: unknown value '{}'{} (one of: {})", experiment, p.name,
                                 shown(item), did_you_mean(item, p.choices), fmt::join(p.choices, ", ")));
}

}  // namespace

Params::Params(const std::vector<ParamSpec>& specs, const std::map<std::string, std::string>& given,
               std::string_view experiment) {
  for (const auto& entry : given) {
    // (Not a structured binding: clang before 16 cannot capture one in a lambda.)
    const std::string& name = entry.first;
    if (std::none_of(specs.begin(), specs.end(), [&](const ParamSpec& p) { return p.name == name; })) {
      std::vector<std::string> names;
      for (const ParamSpec& p : specs) names.push_back(p.name);
      throw UsageError(fmt::format("{} has no parameter '{}'{} ({})", experiment, shown(name), did_you_mean(name, names),
                                   names.empty() ? std::string("it takes none") : fmt::format("{}", fmt::join(names, ", "))));
    }
  }
  for (const ParamSpec& p : specs) {
    const auto it = given.find(p.name);
    const std::string text = trim(it != given.end() ? it->second : p.default_value);
    if (text.empty()) throw UsageError(fmt::format("{} parameter {}: empty value", experiment, p.name));
    switch (p.type) {
      case ParamType::integer: checked_number(text, p, experiment, true); break;
      case ParamType::real: checked_number(text, p, experiment, false); break;
      case ParamType::text: check_choice(text, p, experiment); break;
      case ParamType::list:
        for (const std::string& item : split_list(text)) {
          if (item.empty())
            throw UsageError(fmt::format("{} parameter {}: empty item in '{}'", experiment, p.name, text));
          if (p.items_numeric) checked_number(item, p, experiment, false);
          else check_choice(item, p, experiment);
        }
        break;
    }
    values_.emplace_back(p.name, text);
  }
}

const std::string& Params::raw(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  // An experiment asking for a parameter it did not declare is a bug in it.
  throw std::logic_error(fmt::format("undeclared parameter {}", name));
}

std::int64_t Params::integer(std::string_view name) const {
  return static_cast<std::int64_t>(parse_number(raw(name)));
}
double Params::real(std::string_view name) const { return parse_number(raw(name)); }
const std::string& Params::text(std::string_view name) const { return raw(name); }
std::vector<std::string> Params::list(std::string_view name) const { return split_list(raw(name)); }
std::vector<double> Params::numbers(std::string_view name) const {
  std::vector<double> out;
  for (const std::string& item : split_list(raw(name))) out.push_back(parse_number(item));
  return out;
}
std::vector<Decimal> Params::decimals(std::string_view name) const {
  std::vector<Decimal> out;
  for (const std::string& item : split_list(raw(name))) out.push_back(parse_value(item));
  return out;
}

}  // namespace lplab::experiments
