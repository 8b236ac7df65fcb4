// lplab formats: the known formats, their layouts and encodings.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "lplab/commands.h"
#include "lplab/lab/table.h"
#include "lplab/runtime/text.h"

namespace lplab::tool {

namespace {

void run_formats(Output out) {
  if (out == Output::json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const FormatEntry& e : formats())
      j.push_back({{"name", e.name}, {"bits", e.info.bits}, {"exponent_bits", e.info.exponent_bits},
                   {"mantissa_bits", e.info.mantissa_bits}, {"bias", e.info.bias},
                   {"encoding", encoding_name(e.info.encoding)}, {"signed", e.info.is_signed},
                   {"description", e.description}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"name", "bits", "layout", "bias", "encoding", "max", "description"}};
  for (const FormatEntry& e : formats()) {
    const auto& i = e.info;
    rows.push_back({std::string(e.name), std::to_string(i.bits),
                    fmt::format("{}E{}M{}", i.is_signed ? "S" : "U", i.exponent_bits, i.mantissa_bits),
                    std::to_string(i.bias), encoding_name(i.encoding), shortest(i.max), std::string(e.description)});
  }
  if (out == Output::csv) {
    print_stdout(csv_text(rows));
    return;
  }
  fmt::print("{}", render_table(rows));
}

}  // namespace

LPLAB_COMMAND(Command{"formats", "List the known formats", {output_option()}, [](const Args& a) {
                        run_formats(output_of(a));
                        return 0;
                      }});

}  // namespace lplab::tool
