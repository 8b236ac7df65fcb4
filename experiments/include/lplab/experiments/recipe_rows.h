// Named recipes (kernels/recipes.h) as rows of the scheme tables: each
// distinct treatment of a recipe's GEMM operands -- its format, scaling,
// block shape, scale rule, rounding and transforms -- quantizes a matrix and
// gives back the values the GEMM reads, as a scheme's round trip does
// (scaled.h). A recipe name in an experiment's `schemes` expands into its
// rows, named "<recipe>/<uses>": "nvfp4_training/fprop.a",
// "nvfp4_training/fprop.b+dgrad.b" (the weights, 16 x 16), ... with uses
// role.a or role.b joined by '+' in fprop, dgrad, wgrad order.
//
// Each treatment runs through lplab's kernels, in this order:
// 1. the random Hadamard transform along each row (hadamard_rows, TE's
//    signs, its output rounded to bfloat16 as TE's is), where the operand
//    has it; a short last row is padded with zeros for it;
// 2. the scaling: a plain cast (nearest-even, overflow to infinity, as a
//    framework's cast), per-tensor current or delayed scaling (TensorScaling,
//    DelayedScaling: each row a training step), fp32 block scales (TileScaling
//    with DeepSeek-V3's amax floor), power-of-two fp32 block scales
//    (TileScaling with TE's te_pow2 rule), block scales (BlockScaling
//    with the recipe's block rows x cols, rule and tensor scale), or Four Over
//    Six (four_over_six.h, TE's order, MAE, E4M3 bound 256);
// 3. the elements rounded to nearest-even, or stochastically as cvt.rs does
//    (quantize_stochastic: Philox, seed 0, subsequence 0, sm_100a's rbits);
// 4. dequantization, and the inverse transform in float32 where 1 applied.
// The rows compare with the x they were given: a treatment's error.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/kernels/recipes.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments::scaled {

struct RoundTrip;

struct RecipeRow {
  std::string name;                  // "<recipe>/<uses>"
  const kernels::Recipe* recipe = nullptr;
  kernels::RecipeOperand operand{};
  std::string not_run;               // empty, or why lplab does not run this treatment yet
};

// A block-scaled operand (scaling == block) as the BlockScaling of its
// formats, Elem and Scale, which the caller names: its block's cols and
// rows, its rule and its tensor scale.
template <class Elem, class Scale>
kernels::BlockScaling<Elem, Scale> block_scheme_of(const kernels::RecipeOperand& o) {
  return {.block_size = o.block.cols, .block_rows = o.block.rows, .rule = o.rule, .tensor_scale = o.tensor_scale};
}

// The rows of the recipe called `name` (none for a name that is not a recipe).
std::vector<RecipeRow> recipe_rows(std::string_view name);
// The row called `name` ("<recipe>/<uses>"), or false.
bool find_recipe_row(std::string_view name, RecipeRow& row);

// x, a matrix of rows of `cols` values (the last may be shorter), through the
// row's treatment. std::invalid_argument for a row lplab does not run.
RoundTrip recipe_round_trip(const RecipeRow& row, std::span<const float> x, std::size_t cols);

}  // namespace lplab::experiments::scaled
