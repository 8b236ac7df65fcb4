// Named training and serving recipes as data: for each GEMM of a linear
// layer's step (fprop, dgrad, wgrad) the formats of its two operands, how
// each is scaled (per tensor, per block of rows x cols, the scale's format
// and rule), how it is rounded (nearest-even, or stochastically as PTX's
// cvt.rs does it, kernels/cvt_rs.h), whether TE's random Hadamard transform
// or Four Over Six applies (hadamard.h, four_over_six.h), how the GEMM
// accumulates; and for each GPU generation the matrix-unit preset that runs
// each GEMM (kernels/mma.h), or why none does. docs/recipes.md cites each
// recipe's parameters beside their source.
//
// A recipe is a value (like a format descriptor or an accumulator preset);
// recipe_problem is the one check that its parts exist and fit together:
// every format in the catalog, every preset in mma.h's table, each preset's
// operand types the recipe's formats (CDNA3's fp8 in its FNUZ encodings),
// a block-scaled instruction's scale format the recipe's and its scale
// block the recipe's block along K (or, for power-of-two fp32 scales, a
// divisor of it: the scale repeated, as TE runs Float8BlockScaling on
// Blackwell's MXFP8 instructions).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/formats/enum_table.h"
#include "lplab/formats/policy.h"
#include "lplab/kernels/scale_rules.h"

namespace lplab::kernels {

// The three GEMMs of a linear layer Y = X W^T in training, X(name, meaning).
// A is the GEMM's left operand, B its right one; K is the reduction dimension.
#define LPLAB_GEMM_ROLES(X)                                                                   \
  X(fprop, "Y = X W^T: A = the activations X, B = the weights W, K = in-features")             \
  X(dgrad, "dX = dY W: A = the output gradient dY, B = the weights W, K = out-features")       \
  X(wgrad, "dW = dY^T X: A = dY^T, B = the activations X, K = tokens")
enum class GemmRole : std::uint8_t { LPLAB_GEMM_ROLES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(GemmRole, "GEMM role", LPLAB_GEMM_ROLES)
inline constexpr std::size_t kGemmRoles = enum_count<GemmRole>();

// How an operand's values are scaled before they are rounded into its format.
#define LPLAB_OPERAND_SCALINGS(X)                                                                           \
  X(none, "none: the values are rounded into the format as they are")                                        \
  X(tensor_current, "one fp32 scale per tensor, elem_max / amax of the tensor itself (TE Float8CurrentScaling)") \
  X(tensor_delayed, "one fp32 scale per tensor, elem_max / the largest of the last 1024 amaxes, margin 0 "    \
                    "(TE DelayedScaling)")                                                                   \
  X(block_fp32, "an fp32 scale per block, elem_max / the block's amax (DeepSeek-V3's tiles)")                 \
  X(block_fp32_pow2, "block_fp32 with the scale's mantissa cleared: ceil's power of two (TE Float8BlockScaling)") \
  X(block, "a scale per block in the scale format, by the scale rule (OCP MX v1.0, NVFP4)")
enum class OperandScaling : std::uint8_t { LPLAB_OPERAND_SCALINGS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(OperandScaling, "operand scaling", LPLAB_OPERAND_SCALINGS)

// A block in the GEMM's terms: `rows` along M (A) or N (B), `cols` along K.
// A matrix unit's block scales cover 1 x scale_block along K; a 16 x 16
// weight block gives each of its 16 rows' 1 x 16 slices the same scale.
struct BlockShape {
  int rows = 0, cols = 0;  // 0 x 0: no block (per tensor, or unscaled)
  constexpr bool operator==(const BlockShape&) const = default;
};

// One operand of one GEMM.
struct RecipeOperand {
  std::string_view format{};  // its catalog name (formats/catalog.h)
  OperandScaling scaling = OperandScaling::none;
  BlockShape block{};            // the block* scalings
  std::string_view scale_format{};  // the scale's catalog name ("float32" for the fp32 scalings; "" for none)
  ScaleRule rule = ScaleRule::floor;  // scaling == block: how the scale is computed (scale_rules.h)
  bool tensor_scale = false;     // NVFP4's second, fp32 scale per tensor: 6 * 448 / amax (Four Over Six: 6 * 256)
  Round round = Round::nearest_even;  // stochastic: PTX cvt.rs with random bits (cvt_rs.h)
  bool hadamard = false;         // TE's 16 x 16 random Hadamard transform along K first (hadamard.h)
  bool four_over_six = false;    // each block scaled to a maximum of 4 or 6: four_over_six.h's
                                 // scales (TE's order, E4M3 bound 256) in place of `rule`
};

// One GEMM: its operands and how it accumulates.
struct RecipeGemm {
  RecipeOperand a, b;
  std::string_view accumulation;
};

// The matrix-unit presets that run a recipe on one GPU generation: one per
// role ("" where that GEMM stays in higher precision), and a note.
struct RecipeUnits {
  std::string_view generation;  // a preset name's first part: "hopper" (gpu_generations())
  std::array<std::string_view, kGemmRoles> preset;
  std::string_view note;
};

struct Recipe {
  std::string_view name;
  std::string_view summary;   // one line
  std::string_view source;    // where its parameters come from (docs/recipes.md cites them in full)
  std::array<RecipeGemm, kGemmRoles> gemm;  // by GemmRole
  std::span<const RecipeUnits> units;       // the generations that run it
  std::string_view unsupported;             // why the other generations do not
  std::string_view notes;                   // what else the recipe fixes: loss scaling, switches, layers kept
};

// Every recipe, in the order `lplab recipe --list` shows them.
std::span<const Recipe> recipes();
const Recipe* find_recipe(std::string_view name);

// The GPU generations of mma.h's presets, each once, in the order of their
// first preset in its table: each preset name's first part ("volta", ...,
// "cdna3") and its architecture ("Volta (sm_70)").
struct GpuGeneration {
  std::string_view name, arch;
};
std::vector<GpuGeneration> gpu_generations();

// The units entry of `generation` in r, or nullptr (not supported there).
const RecipeUnits* recipe_units(const Recipe& r, std::string_view generation);

// Empty when every part of r exists and fits (above); else one line naming
// the recipe, the part and what is wrong ("nvfp4_training: blackwell wgrad:
// blackwell.tcgen05... takes A in e4m3, the recipe float4_e2m1fn").
std::string recipe_problem(const Recipe& r);

// "1x16", "16x16"; "tensor" for a per-tensor scale; "-" for none.
std::string block_text(const RecipeOperand& o);

}  // namespace lplab::kernels
