// lplab values FORMAT: every code of a format of at most 16 bits, with its
// bits, value and class, as a table, CSV or JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {
namespace {

void run_values(const FormatEntry* e, const std::string& order, Output out, const std::string& out_file) {
  // Step 1: the request, checked before anything is printed.
  constexpr int kMaxBits = 16;  // 65536 codes: a table one can still read or load
  if (e->info.bits > kMaxBits)
    throw UsageError(fmt::format("values: {} has {} bits ({} codes); values lists formats of at most {} bits",
                                 e->name, e->info.bits, std::uint64_t{1} << e->info.bits, kMaxBits));
  if (order != "code" && order != "value")
    throw UsageError(fmt::format("--order: '{}' is not code or value", order));

  // Step 2: the codes, in code order or by value (NaNs last; -0 before +0).
  std::vector<std::uint64_t> codes(std::size_t{1} << e->info.bits);
  std::iota(codes.begin(), codes.end(), std::uint64_t{0});
  if (order == "value") {
    std::stable_sort(codes.begin(), codes.end(), [e](std::uint64_t a, std::uint64_t b) {
      const double x = e->to_double(a), y = e->to_double(b);
      if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
      if (x != y) return x < y;
      return std::signbit(x) && !std::signbit(y);
    });
  }

  // Step 3: one row per code.
  const FinfoValues& f = e->info;
  std::vector<std::vector<std::string>> table = {{"code", "bits (s|e|m)", "value", "class"}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::uint64_t c : codes) {
    std::vector<std::string> row = {code_hex(e, c), bit_groups(c, f.is_signed, f.exponent_bits, f.mantissa_bits),
                                    e->to_text(c), code_class(e, c)};
    if (out == Output::json)
      rows.push_back({{"code", row[0]}, {"bits", row[1]}, {"value", value_json(e, c)}, {"class", row[3]}});
    else
      table.push_back(std::move(row));
  }

  // Step 4: print.
  const std::uint64_t inf_codes = (std::uint64_t{1} << f.bits) - f.finite_codes - f.nan_codes;
  if (out == Output::json) {
    nlohmann::ordered_json j = {{"format", e->name},   {"bits", f.bits},
                                {"codes", codes.size()}, {"finite_codes", f.finite_codes},
                                {"finite_values", f.finite_values}, {"nan_codes", f.nan_codes},
                                {"infinity_codes", inf_codes},      {"order", order},
                                {"values", std::move(rows)}};
    emit(j.dump(2) + "\n", out_file);
  } else if (out == Output::csv) {
    emit(csv_text(table), out_file);
  } else {
    emit(fmt::format("{}: {} codes: {} finite ({} distinct values), {} NaN, {} infinite; in {} order\n\n{}",
                             e->name, codes.size(), f.finite_codes, f.finite_values, f.nan_codes, inf_codes, order,
                             render_table(table)),
         out_file);
  }
}

}  // namespace

LPLAB_COMMAND(Command{"values",
                      "Every code of a format of at most 16 bits: bits, value, class",
                      {positional("format", "The format (fp16, bf16, e4m3, e2m1, ...)", true),
                       option("--order", "code (default) or value (ascending; NaNs last)"), output_option(),
                       option("--out", "Write to FILE (atomically; - is stdout) instead of stdout; a .json or .csv "
                                       "name sets --output")},
                      [](const Args& a) {
                        const Output out = output_of(a);
                        const std::string out_file = output_file(a, "--out");
                        run_values(&resolve_format(a.value("format")), a.value("--order", "code"), out, out_file);
                        return 0;
                      }});

}  // namespace lplab::tool
