// The named recipes (recipes.h). Sources, cited in full in docs/recipes.md:
// PyTorch's autocast and GradScaler (torch.amp), Transformer Engine's
// recipes (transformer_engine/common/recipe/__init__.py: DelayedScaling,
// Float8CurrentScaling, Float8BlockScaling, MXFP8BlockScaling,
// NVFP4BlockScaling), DeepSeek-V3 (arXiv 2412.19437, section 3.3), NVIDIA's
// NVFP4 training paper (arXiv 2509.25149) and Four Over Six (arXiv
// 2512.02010; TE's NVTE_NVFP4_4OVER6). Presets are mma.h's names.
#include "lplab/kernels/recipes.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "lplab/formats.h"
#include "lplab/kernels/mma.h"

namespace lplab::kernels {

namespace {

using S = OperandScaling;

// `pattern` with each {} replaced by the next argument (the messages below).
template <class... A>
std::string text(std::string_view pattern, const A&... args) {
  std::ostringstream out;
  auto next = [&](const auto& arg) {
    const std::size_t at = pattern.find("{}");
    out << pattern.substr(0, at) << arg;
    pattern.remove_prefix(at + 2);
  };
  (next(args), ...);
  out << pattern;
  return out.str();
}
constexpr Round kRne = Round::nearest_even;
constexpr Round kSr = Round::stochastic;

// Operands, by how they are scaled.
constexpr RecipeOperand cast(std::string_view format) { return {.format = format}; }
constexpr RecipeOperand per_tensor(std::string_view format, S scaling) {
  return {.format = format, .scaling = scaling, .scale_format = "float32"};
}
constexpr RecipeOperand fp32_blocks(std::string_view format, S scaling, BlockShape block) {
  return {.format = format, .scaling = scaling, .block = block, .scale_format = "float32"};
}
constexpr RecipeOperand mx(std::string_view format, BlockShape block = {1, 32}) {
  return {.format = format, .scaling = S::block, .block = block, .scale_format = "float8_e8m0fnu",
          .rule = ScaleRule::rceil};
}
// NVFP4 as TE quantizes it: 16 E2M1 values share an E4M3 scale, under an fp32
// tensor scale, in TE's order (amax_ratio_te).
constexpr RecipeOperand nvfp4(BlockShape block, Round round = kRne, bool hadamard = false,
                              bool four_over_six = false) {
  return {.format = "float4_e2m1fn", .scaling = S::block, .block = block, .scale_format = "float8_e4m3fn",
          .rule = ScaleRule::amax_ratio_te, .tensor_scale = true, .round = round, .hadamard = hadamard,
          .four_over_six = four_over_six};
}
constexpr RecipeGemm same(const RecipeOperand& o, std::string_view accumulation) { return {o, o, accumulation}; }

constexpr std::string_view kFp32Acc = "fp32 in the matrix unit";
constexpr std::string_view kFast =
    "fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM): on Ada and Hopper the whole K in the unit's own "
    "accumulator (E8M13: lplab's promote_every = 0)";
constexpr std::string_view kSplit =
    "split accumulator: partial sums promoted into fp32 (cuBLAS does not document the interval; lplab models 128)";
constexpr std::string_view kBlockwiseAcc =
    "split accumulator (forced): on Hopper cuBLAS's VEC128_32F / BLK128x128_32F scale modes apply the block "
    "scales as partial sums are promoted into fp32 (the interval is undocumented; lplab models 128); on "
    "Blackwell the MXFP8 instruction applies them";
constexpr std::string_view kPromoteScaled =
    "every 128 of K (four wgmma k32 steps) the partial sum, times both blocks' scales, is added into fp32 on "
    "the CUDA cores";

// --- The presets, generation by generation. -------------------------------

constexpr std::array<std::string_view, 3> all(std::string_view p) { return {p, p, p}; }

constexpr RecipeUnits kFp32Units[] = {
    {"cdna1", all("cdna1.mfma.f32_32x32x2f32"), "where rocBLAS runs SGEMM on MFMA"},
    {"cdna2", all("cdna2.mfma.f32_32x32x2f32"), "where rocBLAS runs SGEMM on MFMA"},
    {"cdna3", all("cdna3.mfma.f32_32x32x2_f32"), "where hipBLASLt runs SGEMM on MFMA (xf32 only if TF32 is allowed)"},
};
constexpr RecipeUnits kBf16Units[] = {
    {"ampere", all("ampere.mma.m16n8k16.f32.bf16.bf16.f32"), ""},
    {"ada", all("ada.mma.m16n8k16.f32.bf16.bf16.f32"), ""},
    {"rtx_blackwell", all("rtx_blackwell.mma.m16n8k16.f32.bf16.bf16.f32"), ""},
    {"hopper", all("hopper.wgmma.f32.bf16.bf16"), ""},
    {"blackwell", all("blackwell.tcgen05.f16.f32.bf16.bf16"), ""},
    {"cdna1", all("cdna1.mfma.f32_32x32x4bf16"), ""},
    {"cdna2", all("cdna2.mfma.f32_32x32x8bf16_1k"), ""},
    {"cdna3", all("cdna3.mfma.f32_32x32x8_bf16"), ""},
};
constexpr RecipeUnits kFp16Units[] = {
    {"volta", all("volta.mma.m8n8k4.f32.f16.f16.f32"), ""},
    {"turing", all("turing.mma.m16n8k8.f32.f16.f16.f32"), ""},
    {"ampere", all("ampere.mma.m16n8k16.f32.f16.f16.f32"), ""},
    {"ada", all("ada.mma.m16n8k16.f32.f16.f16.f32"), ""},
    {"rtx_blackwell", all("rtx_blackwell.mma.m16n8k16.f32.f16.f16.f32"), ""},
    {"hopper", all("hopper.wgmma.f32.f16.f16"), ""},
    {"blackwell", all("blackwell.tcgen05.f16.f32.f16.f16"), ""},
    {"cdna1", all("cdna1.mfma.f32_32x32x8f16"), ""},
    {"cdna2", all("cdna2.mfma.f32_32x32x8f16"), "CDNA2's fp16 MFMA flushes subnormal products (ftz_pairs)"},
    {"cdna3", all("cdna3.mfma.f32_32x32x8_f16"), ""},
};
// TE's HYBRID format: E4M3 forward, E5M2 gradients (dY is A of dgrad and wgrad).
constexpr RecipeUnits kFp8TensorUnits[] = {
    {"ada",
     {"ada.mma.m16n8k32.f32.e4m3.e4m3.f32", "ada.mma.m16n8k32.f32.e5m2.e4m3.f32", "ada.mma.m16n8k32.f32.e5m2.e4m3.f32"},
     ""},
    {"rtx_blackwell",
     {"rtx_blackwell.mma.m16n8k32.f32.e4m3.e4m3.f32", "rtx_blackwell.mma.m16n8k32.f32.e5m2.e4m3.f32",
      "rtx_blackwell.mma.m16n8k32.f32.e5m2.e4m3.f32"},
     ""},
    {"hopper", {"hopper.wgmma.f32.e4m3.e4m3", "hopper.wgmma.f32.e5m2.e4m3", "hopper.wgmma.f32.e5m2.e4m3"}, ""},
    {"blackwell",
     {"blackwell.tcgen05.f8f6f4.f32.e4m3.e4m3", "blackwell.tcgen05.f8f6f4.f32.e5m2.e4m3",
      "blackwell.tcgen05.f8f6f4.f32.e5m2.e4m3"},
     "tcgen05 keeps 25 fraction bits: fast and split accumulation give the same sums in lplab's model"},
    {"cdna3",
     {"cdna3.mfma.f32_32x32x16_fp8_fp8", "cdna3.mfma.f32_32x32x16_bf8_fp8", "cdna3.mfma.f32_32x32x16_bf8_fp8"},
     "ROCm's Transformer Engine, in the FNUZ encodings: E4M3's maximum 240, E5M2's 57344"},
};
constexpr RecipeUnits kFp8BlockUnits[] = {
    {"hopper", all("hopper.wgmma.f32.e4m3.e4m3"), "cuBLAS (12.9 or later) applies the block scales as it promotes"},
    {"blackwell", all("blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0"),
     "TE emulates it with MXFP8: each power-of-two scale repeated over the four 1 x 32 blocks it covers (exact)"},
};
constexpr RecipeUnits kDeepSeekUnits[] = {
    {"hopper", all("hopper.wgmma.f32.e4m3.e4m3"),
     "H800: four wgmma k32 steps (128 of K), then promotion into fp32 on the CUDA cores"},
};
constexpr RecipeUnits kMxfp8Units[] = {
    {"blackwell", all("blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0"), ""},
    {"rtx_blackwell", all("rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e4m3.e4m3.f32.ue8m0"),
     "the instruction exists; TE refuses MXFP8 on sm_120 and later"},
};
constexpr RecipeUnits kNvfp4Units[] = {
    {"blackwell", all("blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"), "sm_100 and sm_103 (TE: TN GEMMs only)"},
    {"rtx_blackwell", all("rtx_blackwell.mma.m16n8k64.mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3"),
     "the instruction exists; TE serves NVFP4 on sm_120 but does not train with it"},
};

constexpr std::string_view kNoFp8 = "no fp8 matrix unit before Ada (sm_89); CDNA1 and CDNA2 have none";

constexpr std::array kRecipes = std::to_array<Recipe>({
    {"fp32",
     "fp32 everywhere, as PyTorch runs it by default",
     "PyTorch: torch.backends.cuda.matmul.allow_tf32 = False since 1.12",
     {same(cast("float32"), "fp32 FFMA on the CUDA cores (lplab accumulator fp32)"),
      same(cast("float32"), "fp32 FFMA on the CUDA cores"), same(cast("float32"), "fp32 FFMA on the CUDA cores")},
     kFp32Units,
     "NVIDIA's matrix units take no fp32 operands (TF32 rounds them: a different recipe)",
     "master weights fp32; no loss scaling"},
    {"bf16_amp",
     "bf16 autocast: bf16 operands, fp32 accumulation and master weights",
     "PyTorch torch.autocast(dtype=torch.bfloat16)",
     {same(cast("bfloat16"), kFp32Acc), same(cast("bfloat16"), kFp32Acc), same(cast("bfloat16"), kFp32Acc)},
     kBf16Units,
     "Volta and Turing have no bf16 matrix unit",
     "operands cast from the fp32 parameters to nearest-even; no loss scaling"},
    {"fp16_gradscaler",
     "fp16 autocast with dynamic loss scaling",
     "PyTorch torch.autocast(dtype=torch.float16) and torch.amp.GradScaler",
     {same(cast("float16"), kFp32Acc), same(cast("float16"), kFp32Acc), same(cast("float16"), kFp32Acc)},
     kFp16Units,
     "",
     "GradScaler: the loss times S, S starting at 2^16; a step with an inf or NaN gradient is skipped and halves S "
     "(backoff 0.5); 2000 clean steps in a row double it (growth 2); gradients are unscaled by 1/S before the "
     "optimizer; master weights fp32"},
    {"fp8_delayed",
     "FP8 per-tensor scaling from an amax history (Transformer Engine DelayedScaling, HYBRID)",
     "TE DelayedScaling: fp8_format HYBRID, margin 0, amax_history_len 1024, amax_compute_algo max",
     {RecipeGemm{per_tensor("float8_e4m3fn", S::tensor_delayed), per_tensor("float8_e4m3fn", S::tensor_delayed), kFast},
      RecipeGemm{per_tensor("float8_e5m2", S::tensor_delayed), per_tensor("float8_e4m3fn", S::tensor_delayed), kSplit},
      RecipeGemm{per_tensor("float8_e5m2", S::tensor_delayed), per_tensor("float8_e4m3fn", S::tensor_delayed), kSplit}},
     kFp8TensorUnits,
     kNoFp8,
     "rounding nearest-even, saturating; the first step's scale is 1; an amax of 0 or a non-finite one keeps the "
     "previous scale; master weights fp32, no loss scaling"},
    {"fp8_current",
     "FP8 per-tensor scaling from each tensor's own amax (Transformer Engine Float8CurrentScaling, HYBRID)",
     "TE Float8CurrentScaling: fp8_format HYBRID, amax_epsilon 0, fprop fast accumulation, dgrad and wgrad split",
     {RecipeGemm{per_tensor("float8_e4m3fn", S::tensor_current), per_tensor("float8_e4m3fn", S::tensor_current), kFast},
      RecipeGemm{per_tensor("float8_e5m2", S::tensor_current), per_tensor("float8_e4m3fn", S::tensor_current), kSplit},
      RecipeGemm{per_tensor("float8_e5m2", S::tensor_current), per_tensor("float8_e4m3fn", S::tensor_current), kSplit}},
     kFp8TensorUnits,
     kNoFp8,
     "scale = fp8_max / amax rounded to nearest (__fdiv_rn); amax 0 or non-finite gives 1; "
     "NVTE_FP8_CURRENT_SCALING_POWER_2_SCALES=1 clears the scale's mantissa"},
    {"fp8_blockwise",
     "FP8 with power-of-two fp32 scales per 1 x 128 activation block and 128 x 128 weight block "
     "(Transformer Engine Float8BlockScaling)",
     "TE Float8BlockScaling: fp8_format E4M3, x and dY 1 x 128, w_block_scaling_dim 2 (128 x 128), "
     "power-of-two scales, split accumulator forced",
     {RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {128, 128}), kBlockwiseAcc},
      RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {128, 128}), kBlockwiseAcc},
      RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32_pow2, {1, 128}), kBlockwiseAcc}},
     kFp8BlockUnits,
     "TE needs compute capability 9.0 and CUDA 12.9 or later",
     "wgrad takes dY and X quantized again along the tokens (columnwise, 1 x 128 along its K); a 2D x 2D GEMM is "
     "refused; NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1 keeps the fp32 scales (Hopper only)"},
    {"fp8_deepseek_v3",
     "FP8 with fp32 scales per 1 x 128 tile and 128 x 128 block, promoted every 128 (DeepSeek-V3)",
     "DeepSeek-V3 technical report, arXiv 2412.19437, section 3.3",
     {RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32, {128, 128}), kPromoteScaled},
      RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32, {128, 128}), kPromoteScaled},
      RecipeGemm{fp32_blocks("float8_e4m3fn", S::block_fp32, {1, 128}),
                 fp32_blocks("float8_e4m3fn", S::block_fp32, {1, 128}), kPromoteScaled}},
     kDeepSeekUnits,
     "published for Hopper (H800); other generations would emulate it",
     "E4M3 on every tensor; wgrad's activations and dY retiled 128 x 1 (1 x 128 along its K); embedding, output "
     "head, MoE gating, normalization and attention stay in bf16/fp32; master weights and weight gradients fp32"},
    {"mxfp8",
     "MXFP8: 1 x 32 blocks along K with E8M0 scales (Transformer Engine MXFP8BlockScaling)",
     "TE MXFP8BlockScaling: fp8_format E4M3, scale = E8M0 of amax / 448 rounded up (cvt.rp.satfinite.ue8m0x2)",
     {same(mx("float8_e4m3fn"), kFp32Acc), same(mx("float8_e4m3fn"), kFp32Acc), same(mx("float8_e4m3fn"), kFp32Acc)},
     kMxfp8Units,
     "block-scaled matrix units start with Blackwell",
     "each GEMM quantizes its own copy along its K: rowwise for fprop, the weights columnwise for dgrad, dY and X "
     "columnwise for wgrad; fp8_format HYBRID gives dY in E5M2"},
    {"nvfp4_training",
     "NVFP4 training: 1 x 16 blocks, 16 x 16 weight blocks, stochastic rounding of gradients, Hadamard on wgrad",
     "TE NVFP4BlockScaling; NVIDIA, Pretraining LLMs with NVFP4, arXiv 2509.25149",
     {RecipeGemm{nvfp4({1, 16}), nvfp4({16, 16}), kFp32Acc},
      RecipeGemm{nvfp4({1, 16}, kSr), nvfp4({16, 16}), kFp32Acc},
      RecipeGemm{nvfp4({1, 16}, kSr, true), nvfp4({1, 16}, kRne, true), kFp32Acc}},
     kNvfp4Units,
     "FP4 matrix units start with Blackwell; TE trains in NVFP4 on sm_100 and sm_103",
     "each switch can be turned off: NVTE_NVFP4_DISABLE_RHT, NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING, "
     "NVTE_NVFP4_DISABLE_2D_QUANTIZATION; the paper keeps about 16% of the linear layers in bf16 (selective "
     "high-precision layers), and embeddings, output head, normalization and attention out of NVFP4; master "
     "weights fp32"},
    {"nvfp4_4over6",
     "NVFP4 with Four Over Six on the weights: each block scaled to 4 or 6, whichever errs less (MAE)",
     "TE NVTE_NVFP4_4OVER6=weights, NVTE_NVFP4_4OVER6_ERR_MODE=MAE, E4M3 bound 256; arXiv 2512.02010",
     {RecipeGemm{nvfp4({1, 16}), nvfp4({16, 16}, kRne, false, true), kFp32Acc},
      RecipeGemm{nvfp4({1, 16}, kSr), nvfp4({16, 16}, kRne, false, true), kFp32Acc},
      RecipeGemm{nvfp4({1, 16}, kSr, true), nvfp4({1, 16}, kRne, true), kFp32Acc}},
     kNvfp4Units,
     "FP4 matrix units start with Blackwell",
     "Four Over Six's scales replace NVFP4's: s_enc = 6 * 256 / amax, each block's scale (bmax / 6) * s_enc "
     "(map to 6) or 1.5 times that (map to 4), clamped to 448 (four_over_six.h, TE's order); it never applies "
     "to gradients, nor to a tensor with the Hadamard transform or stochastic rounding; =activations or =all "
     "extends it to X in fprop and wgrad, and then needs NVTE_NVFP4_DISABLE_RHT=1, which also takes the "
     "Hadamard transform off wgrad's dY; TE aims it at RL and post-training"},
});

// --- Checks. ----------------------------------------------------------------

constexpr std::string_view kCatalog[] = {
#define LPLAB_RECIPE_FORMAT_NAME(type, names, description) #type,
    LPLAB_FORMAT_CATALOG(LPLAB_RECIPE_FORMAT_NAME)
#undef LPLAB_RECIPE_FORMAT_NAME
};
bool in_catalog(std::string_view name) {
  return std::find(std::begin(kCatalog), std::end(kCatalog), name) != std::end(kCatalog);
}

// The catalog format an operand type's codes are ("float32" for f32).
std::string operand_format(MmaType t) {
  if (t == MmaType::f32) return "float32";
  return std::string(mma_format_name(t));
}

// Whether the unit's operand format is the recipe's: the same, or AMD's FNUZ
// encoding of it on CDNA3 (float8_e4m3fn -> float8_e4m3fnuz, e5m2 -> e5m2fnuz).
bool unit_takes(const std::string& unit, std::string_view recipe, std::string_view generation) {
  if (unit == recipe) return true;
  return generation == "cdna3" && (recipe == "float8_e4m3fn" ? unit == "float8_e4m3fnuz"
                                   : recipe == "float8_e5m2" ? unit == "float8_e5m2fnuz"
                                                             : false);
}

std::string operand_problem(const RecipeOperand& o) {
  if (!in_catalog(o.format)) return text("format '{}' is not in the catalog", o.format);
  const bool blocks = o.scaling == S::block || o.scaling == S::block_fp32 || o.scaling == S::block_fp32_pow2;
  if (blocks && (o.block.rows < 1 || o.block.cols < 1))
    return text("{} scaling needs a block, has {}x{}", enum_name(o.scaling), o.block.rows, o.block.cols);
  if (!blocks && o.block != BlockShape{}) return text("{} scaling has a block", enum_name(o.scaling));
  if (o.scaling == S::none) {
    if (!o.scale_format.empty()) return "an unscaled operand has a scale format";
  } else if (o.scaling == S::block) {
    if (!in_catalog(o.scale_format) || o.scale_format == "float32")
      return text("block scale format '{}' is not a catalog scale format", o.scale_format);
  } else if (o.scale_format != "float32") {
    return text("{} scaling takes float32 scales, not '{}'", enum_name(o.scaling), o.scale_format);
  }
  if (o.tensor_scale && o.scaling != S::block) return "a tensor scale over no block scales";
  if (o.four_over_six && (o.hadamard || o.round != kRne))
    return "Four Over Six with the Hadamard transform or stochastic rounding (TE refuses both)";
  if (o.four_over_six && (o.format != "float4_e2m1fn" || o.scale_format != "float8_e4m3fn" || !o.tensor_scale ||
                          o.block.cols != 16))
    return "Four Over Six is NVFP4's: E2M1 in blocks of 16 along K, E4M3 scales, a tensor scale";
  return {};
}

std::string unit_problem(const Recipe& r, const RecipeUnits& u, const std::vector<GpuGeneration>& gens) {
  if (std::none_of(gens.begin(), gens.end(), [&](const GpuGeneration& g) { return g.name == u.generation; }))
    return text("generation '{}' has no presets", u.generation);
  for (std::size_t role = 0; role < kGemmRoles; ++role) {
    if (u.preset[role].empty()) continue;
    const std::string where = text("{} {}", u.generation, enum_name(static_cast<GemmRole>(role)));
    const MmaInstruction* i = find_mma_instruction(u.preset[role]);
    if (i == nullptr) return text("{}: no preset '{}'", where, u.preset[role]);
    if (!i->name.starts_with(std::string(u.generation) + ".")) return text("{}: {} is another generation's", where, i->name);
    const RecipeGemm& g = r.gemm[role];
    for (const auto& [side, type, o] : {std::tuple{"A", i->a, &g.a}, std::tuple{"B", i->b, &g.b}}) {
      const std::string unit = operand_format(type);
      if (!unit_takes(unit, o->format, u.generation))
        return text("{}: {} takes {} in {}, the recipe {}", where, i->name, side, unit, o->format);
      const int blk = i->model.scale_block;
      if (blk == 0) continue;
      // A block-scaled instruction: 1 x blk scales along K in its scale format.
      const std::string scale = std::string(mma_format_name(i->scale));
      if (o->scaling == S::block) {
        if (o->scale_format != scale)
          return text("{}: {} takes {}'s scales in {}, the recipe {}", where, i->name, side, scale, o->scale_format);
        if (o->block.cols != blk)
          return text("{}: {} scales 1x{} along K, the recipe's {} blocks are {}x{}", where, i->name, blk, side,
                      o->block.rows, o->block.cols);
      } else if (o->scaling == S::block_fp32_pow2) {
        if (o->block.cols % blk != 0)
          return text("{}: {} scales 1x{} along K, which does not divide the recipe's {}x{} {} blocks", where,
                      i->name, blk, o->block.rows, o->block.cols, side);
      } else {
        return text("{}: {} needs block scales for {}, the recipe has {}", where, i->name, side,
                    enum_name(o->scaling));
      }
    }
  }
  return {};
}

}  // namespace

std::span<const Recipe> recipes() { return kRecipes; }

const Recipe* find_recipe(std::string_view name) {
  for (const Recipe& r : kRecipes)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<GpuGeneration> gpu_generations() {
  std::vector<GpuGeneration> out;
  for (const MmaInstruction& i : mma_instructions()) {
    const std::string_view name = std::string_view(i.name).substr(0, i.name.find('.'));
    if (std::none_of(out.begin(), out.end(), [&](const GpuGeneration& g) { return g.name == name; }))
      out.push_back({name, i.arch});
  }
  return out;
}

const RecipeUnits* recipe_units(const Recipe& r, std::string_view generation) {
  for (const RecipeUnits& u : r.units)
    if (u.generation == generation) return &u;
  return nullptr;
}

std::string recipe_problem(const Recipe& r) {
  for (std::size_t role = 0; role < kGemmRoles; ++role) {
    for (const auto& [side, o] : {std::pair{"A", &r.gemm[role].a}, std::pair{"B", &r.gemm[role].b}}) {
      if (const std::string p = operand_problem(*o); !p.empty())
        return text("{}: {} {}: {}", r.name, enum_name(static_cast<GemmRole>(role)), side, p);
    }
  }
  const std::vector<GpuGeneration> gens = gpu_generations();
  for (std::size_t k = 0; k < r.units.size(); ++k) {
    for (std::size_t j = 0; j < k; ++j)
      if (r.units[j].generation == r.units[k].generation)
        return text("{}: generation {} listed twice", r.name, r.units[k].generation);
    if (const std::string p = unit_problem(r, r.units[k], gens); !p.empty()) return text("{}: {}", r.name, p);
  }
  return {};
}

std::string block_text(const RecipeOperand& o) {
  switch (o.scaling) {
    case S::none: return "-";
    case S::tensor_current:
    case S::tensor_delayed: return "tensor";
    default: return text("{}x{}", o.block.rows, o.block.cols);
  }
}

}  // namespace lplab::kernels
