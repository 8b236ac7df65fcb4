// Named recipes' operands as round trips (recipe_rows.h).
#include "lplab/experiments/recipe_rows.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/experiments/scaled.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/four_over_six.h"
#include "lplab/kernels/hadamard.h"
#include "lplab/kernels/scaling.h"
#include "lplab/runtime/formats.h"

namespace lplab::experiments::scaled {
namespace {

namespace k = lplab::kernels;
using k::OperandScaling;

constexpr bool same_treatment(const k::RecipeOperand& a, const k::RecipeOperand& b) {
  return a.format == b.format && a.scaling == b.scaling && a.block == b.block && a.scale_format == b.scale_format &&
         a.rule == b.rule && a.tensor_scale == b.tensor_scale && a.round == b.round && a.hadamard == b.hadamard &&
         a.four_over_six == b.four_over_six;
}

std::string why_not_run(const k::RecipeOperand& o) {
  if (o.four_over_six && !(o.block == k::BlockShape{1, 16}) && !(o.block == k::BlockShape{16, 16}))
    return "Four Over Six on " + k::block_text(o) + " blocks: four_over_six.h takes 1 x 16 and 16 x 16 blocks";
  if (o.four_over_six && o.round != Round::nearest_even) return "Four Over Six with stochastic rounding";
  return "";
}

[[noreturn]] void refuse(const RecipeRow& row, const std::string& why) {
  throw std::invalid_argument("recipe operand " + row.name + ": " + why);
}

// A matrix of rows of `cols` with a short last row padded by zeros.
std::vector<float> padded(std::span<const float> x, std::size_t cols) {
  std::vector<float> v(x.begin(), x.end());
  v.resize((x.size() + cols - 1) / cols * cols, 0.0f);
  return v;
}

// 2.-4. for one element format E: the scaling, the rounding, dequantization.
template <class E>
RoundTrip scale_and_round(const RecipeRow& row, std::span<const float> x, std::size_t cols) {
  const k::RecipeOperand& o = row.operand;
  switch (o.scaling) {
    case OperandScaling::tensor_current: return detail::round_trip(k::TensorScaling<E>{}, x);
    case OperandScaling::tensor_delayed: return detail::round_trip(k::DelayedScaling<E>{}, x, cols);
    case OperandScaling::block_fp32:
    case OperandScaling::block_fp32_pow2:
      // Block schemes of fp32 scales: DeepSeek-V3's rule, or TE's
      // Float8BlockScaling with power-of-two scales.
      if constexpr (k::BlockPair<E, float32>) {
        const k::BlockScaling<E, float32> s{
            .block_size = o.block.cols,
            .block_rows = o.block.rows,
            .rule = o.scaling == OperandScaling::block_fp32 ? k::ScaleRule::deepseek : k::ScaleRule::te_fp32_pow2};
        return detail::round_trip(s, x, cols);
      } else {
        refuse(row, "fp32 block scales pair with " + k::block_pairs_text());
      }
    case OperandScaling::block: break;
    case OperandScaling::none: refuse(row, "unscaled operands are cast, not scaled");
  }
  if (o.four_over_six) {
    if constexpr (std::is_same_v<E, float4_e2m1fn>) {
      const k::FourOverSix p{.metric = k::FourOverSixMetric::mae, .e4m3_max = 256.0f,
                             .order = k::FourOverSixOrder::te};
      const std::size_t rows = (x.size() + cols - 1) / cols, br = static_cast<std::size_t>(o.block.rows);
      std::vector<E> q(x.size());
      std::vector<float8_e4m3fn> sc((rows + br - 1) / br * ((cols + 15) / 16));
      float amax = 0;
      k::quantize_four_over_six(p, x, cols, o.block.rows, q, sc, &amax);
      RoundTrip r;
      r.y.resize(x.size());
      k::dequantize_four_over_six(p, q, cols, o.block.rows, sc, amax, r.y);
      detail::record_elements(r, q);
      return r;
    } else {
      refuse(row, "Four Over Six quantizes to float4_e2m1fn");
    }
  }
  RoundTrip r;
  const runtime::FormatEntry& sf = runtime::resolve_format(o.scale_format);
  runtime::visit_format(sf, [&]<class S>(std::type_identity<S>) {
    if constexpr (k::BlockPair<E, S>) {
      const k::BlockScaling<E, S> s = block_scheme_of<E, S>(o);
      std::vector<E> q(x.size());
      std::vector<S> sc(k::scales_needed(s, x.size(), cols));
      float ts = 1.0f;
      if (o.round == Round::nearest_even)
        k::quantize(s, x, cols, std::span<E>(q), std::span<S>(sc), &ts);
      else if (o.round == Round::stochastic)
        k::quantize_stochastic(s, x, cols, std::span<E>(q), std::span<S>(sc), k::StochasticElements{}, &ts);
      else
        refuse(row, std::string("rounding ") + std::string(enum_name(o.round)));
      r.y.resize(x.size());
      k::dequantize(s, std::span<const E>(q), cols, std::span<const S>(sc), std::span<float>(r.y), ts);
      detail::record_elements(r, q);
    } else {
      refuse(row, "no block scaling of " + std::string(finfo<E>::name) + " with " + std::string(sf.name) + " scales");
    }
  });
  return r;
}

}  // namespace

std::vector<RecipeRow> recipe_rows(std::string_view name) {
  const k::Recipe* r = k::find_recipe(name);
  if (r == nullptr) return {};
  struct Group {
    k::RecipeOperand operand;
    std::string uses;
  };
  std::vector<Group> groups;
  for (const auto& role : enum_entries<k::GemmRole>()) {
    const k::RecipeGemm& g = r->gemm[static_cast<std::size_t>(role.value)];
    for (const auto& [side, o] : {std::pair{"a", &g.a}, std::pair{"b", &g.b}}) {
      const std::string use = std::string(role.name) + "." + side;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return same_treatment(x.operand, *o); });
      if (it == groups.end())
        groups.push_back({*o, use});
      else
        it->uses += "+" + use;
    }
  }
  std::vector<RecipeRow> rows;
  for (const Group& g : groups)
    rows.push_back({std::string(r->name) + "/" + g.uses, r, g.operand, why_not_run(g.operand)});
  return rows;
}

bool find_recipe_row(std::string_view name, RecipeRow& row) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return false;
  for (RecipeRow& r : recipe_rows(name.substr(0, slash)))
    if (r.name == name) {
      row = std::move(r);
      return true;
    }
  return false;
}

RoundTrip recipe_round_trip(const RecipeRow& row, std::span<const float> x, std::size_t cols) {
  if (!row.not_run.empty()) refuse(row, "not run: " + row.not_run);
  if (cols == 0) throw std::invalid_argument("recipe operand " + row.name + ": cols must be at least 1");
  const k::RecipeOperand& o = row.operand;
  const runtime::FormatEntry& ef = runtime::resolve_format(o.format);
  // 2. A cast: each value rounded once, as a framework's cast.
  if (o.scaling == OperandScaling::none) {
    RoundTrip r;
    const std::vector<double> xd(x.begin(), x.end());
    r.y.resize(x.size());
    r.elem.resize(x.size());
    runtime::for_each_rounded(ef, xd, {.round = Round::nearest_even, .overflow = Overflow::ieee},
                              [&](std::size_t first, std::span<const double> y) {
                                for (std::size_t j = 0; j < y.size(); ++j)
                                  r.y[first + j] = static_cast<float>(y[j]), r.elem[first + j] = y[j];
                              });
    r.elem_max = ef.info.max;
    r.elem_smallest_normal = ef.info.smallest_normal;
    return r;
  }
  // 1. The Hadamard transform along the rows.
  std::vector<float> transformed;
  std::span<const float> in = x;
  if (o.hadamard) {
    if (cols % k::kHadamardSize != 0)
      refuse(row, "the Hadamard transform takes rows of a multiple of 16, not " + std::to_string(cols));
    transformed = padded(x, cols);
    k::hadamard_rows(transformed.data(), transformed.size() / cols, cols, transformed.data());
    in = std::span<const float>(transformed).first(x.size());
  }
  RoundTrip r = runtime::visit_format(ef, [&]<class E>(std::type_identity<E>) -> RoundTrip {
    if constexpr (k::BlockElement<E>)
      return scale_and_round<E>(row, in, cols);
    else
      refuse(row, std::string(ef.name) + " is not an element format of scaling");
  });
  // 4. Back to x's basis, in float32.
  if (o.hadamard) {
    std::vector<float> y = padded(r.y, cols);
    k::hadamard_rows(y.data(), y.size() / cols, cols, y.data(), k::kTeHadamardSigns, k::HadamardOutput::float32, true);
    std::copy_n(y.begin(), r.y.size(), r.y.begin());
  }
  return r;
}

}  // namespace lplab::experiments::scaled
