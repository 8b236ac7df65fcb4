// {fmt} support: with an empty spec a value prints as lplab::to_string (the
// shortest round-trip decimal); any other spec is applied to the exact value
// as a double, e.g. "{:.3e}" or "{:a}".
#pragma once

#include <fmt/format.h>

#include "lplab/formats/io.h"

template <lplab::Descriptor D>
struct fmt::formatter<lplab::Float<D>> : fmt::formatter<double> {
  bool shortest = true;

  constexpr auto parse(fmt::format_parse_context& ctx) {
    shortest = ctx.begin() == ctx.end() || *ctx.begin() == '}';
    return fmt::formatter<double>::parse(ctx);
  }

  template <class Context>
  auto format(lplab::Float<D> x, Context& ctx) const {
    if (shortest) return fmt::format_to(ctx.out(), "{}", lplab::to_string(x));
    return fmt::formatter<double>::format(static_cast<double>(x), ctx);
  }
};
