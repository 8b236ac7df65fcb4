// The named recipes (kernels/recipes.h): every recipe's parts exist and fit
// (recipe_problem), the parameters their sources state (Transformer Engine's
// recipe classes, arXiv 2509.25149, 2412.19437, 2512.02010; docs/recipes.md)
// are the table's, and a recipe with one part wrong -- a block edge, a
// preset's operand format, its scale format, a generation -- is refused
// with a message that names the part.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "lplab/kernels/mma.h"
#include "lplab/kernels/recipes.h"

namespace lplab::kernels {
namespace {

const Recipe& named(std::string_view name) {
  const Recipe* r = find_recipe(name);
  if (r == nullptr) throw std::runtime_error("no recipe " + std::string(name));
  return *r;
}
const RecipeGemm& gemm(const Recipe& r, GemmRole role) { return r.gemm[static_cast<std::size_t>(role)]; }

TEST(Recipes, the_issue_lists_every_one_and_each_is_consistent) {
  std::set<std::string_view> names;
  for (const Recipe& r : recipes()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    EXPECT_EQ(recipe_problem(r), "");
    EXPECT_FALSE(r.units.empty()) << r.name << " runs nowhere";
    if (r.units.size() < gpu_generations().size()) {
      EXPECT_FALSE(r.unsupported.empty()) << r.name;
    }
  }
  for (std::string_view want : {"fp32", "bf16_amp", "fp16_gradscaler", "fp8_delayed", "fp8_current", "fp8_blockwise",
                                "mxfp8", "nvfp4_training", "nvfp4_4over6", "fp8_deepseek_v3"})
    EXPECT_TRUE(names.count(want)) << want;
  EXPECT_EQ(find_recipe("nvfp4"), nullptr);
}

// mma.h's generations, each once, in the order of their first preset.
TEST(Recipes, generations_come_from_the_preset_table) {
  const std::vector<GpuGeneration> g = gpu_generations();
  std::vector<std::string_view> names;
  for (const GpuGeneration& x : g) names.push_back(x.name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"volta", "turing", "ampere", "ada", "hopper", "blackwell",
                                                   "rtx_blackwell", "cdna1", "cdna2", "cdna3"}));
  EXPECT_EQ(g[4].arch, "Hopper (sm_90a)");
  EXPECT_EQ(g[9].arch, "CDNA3 (MI300)");
}

// What the sources say (docs/recipes.md cites each).
TEST(Recipes, parameters_are_the_sources) {
  // NVFP4 training: 16 x 16 weight blocks in fprop and dgrad, 1 x 16 elsewhere;
  // gradients (dY) stochastically rounded; the Hadamard transform on wgrad's
  // two operands only; E4M3 block scales under an fp32 tensor scale, TE's order.
  const Recipe& nv = named("nvfp4_training");
  EXPECT_EQ(gemm(nv, GemmRole::fprop).a.block, (BlockShape{1, 16}));
  EXPECT_EQ(gemm(nv, GemmRole::fprop).b.block, (BlockShape{16, 16}));
  EXPECT_EQ(gemm(nv, GemmRole::dgrad).b.block, (BlockShape{16, 16}));
  EXPECT_EQ(gemm(nv, GemmRole::wgrad).b.block, (BlockShape{1, 16}));
  EXPECT_EQ(gemm(nv, GemmRole::fprop).a.round, Round::nearest_even);
  EXPECT_EQ(gemm(nv, GemmRole::dgrad).a.round, Round::stochastic);
  EXPECT_EQ(gemm(nv, GemmRole::wgrad).a.round, Round::stochastic);
  EXPECT_EQ(gemm(nv, GemmRole::wgrad).b.round, Round::nearest_even);
  EXPECT_FALSE(gemm(nv, GemmRole::fprop).a.hadamard);
  EXPECT_FALSE(gemm(nv, GemmRole::dgrad).a.hadamard);
  EXPECT_TRUE(gemm(nv, GemmRole::wgrad).a.hadamard);
  EXPECT_TRUE(gemm(nv, GemmRole::wgrad).b.hadamard);
  EXPECT_EQ(gemm(nv, GemmRole::fprop).a.scale_format, "float8_e4m3fn");
  EXPECT_EQ(gemm(nv, GemmRole::fprop).a.rule, ScaleRule::amax_ratio_te);
  EXPECT_TRUE(gemm(nv, GemmRole::fprop).a.tensor_scale);
  ASSERT_NE(recipe_units(nv, "blackwell"), nullptr);
  EXPECT_EQ(recipe_units(nv, "blackwell")->preset[2], "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3");
  EXPECT_EQ(recipe_units(nv, "hopper"), nullptr);
  // Four Over Six: the weights only, never a gradient, never with the Hadamard transform.
  const Recipe& fos = named("nvfp4_4over6");
  EXPECT_TRUE(gemm(fos, GemmRole::fprop).b.four_over_six);
  EXPECT_TRUE(gemm(fos, GemmRole::dgrad).b.four_over_six);
  EXPECT_FALSE(gemm(fos, GemmRole::fprop).a.four_over_six);
  EXPECT_FALSE(gemm(fos, GemmRole::dgrad).a.four_over_six);
  EXPECT_FALSE(gemm(fos, GemmRole::wgrad).a.four_over_six);
  EXPECT_FALSE(gemm(fos, GemmRole::wgrad).b.four_over_six);
  // MXFP8: 1 x 32 along K, E8M0 scales rounded up (rceil), on Blackwell.
  const Recipe& mx = named("mxfp8");
  for (const RecipeGemm& g : mx.gemm) {
    EXPECT_EQ(g.a.block, (BlockShape{1, 32}));
    EXPECT_EQ(g.b.scale_format, "float8_e8m0fnu");
    EXPECT_EQ(g.b.rule, ScaleRule::rceil);
  }
  // HYBRID: E4M3 forward, E5M2 gradients; fprop fast accumulation, the rest split.
  for (std::string_view name : {"fp8_delayed", "fp8_current"}) {
    const Recipe& r = named(name);
    EXPECT_EQ(gemm(r, GemmRole::fprop).a.format, "float8_e4m3fn") << name;
    EXPECT_EQ(gemm(r, GemmRole::dgrad).a.format, "float8_e5m2") << name;
    EXPECT_EQ(gemm(r, GemmRole::wgrad).a.format, "float8_e5m2") << name;
    EXPECT_EQ(gemm(r, GemmRole::wgrad).b.format, "float8_e4m3fn") << name;
    EXPECT_NE(gemm(r, GemmRole::fprop).accumulation.find("fast"), std::string_view::npos) << name;
    EXPECT_NE(gemm(r, GemmRole::dgrad).accumulation.find("split"), std::string_view::npos) << name;
    EXPECT_EQ(recipe_units(r, "ampere"), nullptr) << name;
  }
  EXPECT_EQ(gemm(named("fp8_delayed"), GemmRole::fprop).a.scaling, OperandScaling::tensor_delayed);
  EXPECT_EQ(gemm(named("fp8_current"), GemmRole::fprop).a.scaling, OperandScaling::tensor_current);
  // TE Float8BlockScaling: 1 x 128 activations, 128 x 128 weights, powers of two;
  // DeepSeek-V3 the same blocks with fp32 scales as computed.
  const Recipe& blk = named("fp8_blockwise");
  EXPECT_EQ(gemm(blk, GemmRole::fprop).a.block, (BlockShape{1, 128}));
  EXPECT_EQ(gemm(blk, GemmRole::fprop).b.block, (BlockShape{128, 128}));
  EXPECT_EQ(gemm(blk, GemmRole::fprop).b.scaling, OperandScaling::block_fp32_pow2);
  EXPECT_EQ(gemm(named("fp8_deepseek_v3"), GemmRole::fprop).b.scaling, OperandScaling::block_fp32);
  EXPECT_EQ(recipe_units(named("fp8_deepseek_v3"), "blackwell"), nullptr);
  // bf16 autocast: no Volta or Turing; fp16: every generation.
  EXPECT_EQ(recipe_units(named("bf16_amp"), "turing"), nullptr);
  EXPECT_EQ(named("fp16_gradscaler").units.size(), gpu_generations().size());
  EXPECT_EQ(block_text(gemm(nv, GemmRole::fprop).b), "16x16");
  EXPECT_EQ(block_text(gemm(named("fp8_current"), GemmRole::fprop).a), "tensor");
  EXPECT_EQ(block_text(gemm(named("bf16_amp"), GemmRole::fprop).a), "-");
}

// A recipe with one part changed; the check must name what is wrong.
struct Mutant {
  Recipe recipe;
  std::vector<RecipeUnits> units;
  explicit Mutant(std::string_view base) : recipe(named(base)), units(recipe.units.begin(), recipe.units.end()) {
    recipe.units = units;
  }
  std::string problem() {
    recipe.units = units;
    return recipe_problem(recipe);
  }
};

void expect_refused(Mutant& m, const std::string& says) {
  const std::string p = m.problem();
  EXPECT_NE(p.find(says), std::string::npos) << "problem: '" << p << "', expected it to say '" << says << "'";
}

TEST(Recipes, one_wrong_part_is_refused_with_its_name) {
  {  // a block edge off by one: the instruction scales 1 x 16
    Mutant m("nvfp4_training");
    m.recipe.gemm[0].a.block = {1, 17};
    expect_refused(m, "nvfp4_training: blackwell fprop: blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3 "
                      "scales 1x16 along K, the recipe's A blocks are 1x17");
  }
  {  // 2D blocks must still be 16 wide along K
    Mutant m("nvfp4_training");
    m.recipe.gemm[1].b.block = {16, 32};
    expect_refused(m, "dgrad: blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3 scales 1x16 along K, the "
                      "recipe's B blocks are 16x32");
  }
  {  // the wrong scale format: MXFP4's E8M0 instruction for NVFP4
    Mutant m("nvfp4_training");
    m.units[0].preset[2] = "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue8m0";
    expect_refused(m, "blackwell wgrad: blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue8m0 takes A's scales in "
                      "float8_e8m0fnu, the recipe float8_e4m3fn");
  }
  {  // an operand format the preset does not take: dgrad's E5M2 gradient on an E4M3 instruction
    Mutant m("fp8_current");
    m.units[2].preset[1] = "hopper.wgmma.f32.e4m3.e4m3";
    expect_refused(m, "hopper dgrad: hopper.wgmma.f32.e4m3.e4m3 takes A in float8_e4m3fn, the recipe float8_e5m2");
  }
  {  // FNUZ stands in for OCP fp8 on CDNA3 only
    Mutant m("fp8_current");
    m.recipe.gemm[0].a.format = "float8_e4m3fnuz";
    m.recipe.gemm[0].b.format = "float8_e4m3fnuz";
    expect_refused(m, "ada fprop: ada.mma.m16n8k32.f32.e4m3.e4m3.f32 takes A in float8_e4m3fn, the recipe float8_e4m3fnuz");
  }
  {  // a preset that does not exist, and one of another generation
    Mutant m("bf16_amp");
    m.units[0].preset[0] = "ampere.mma.m16n8k16.f32.bf16.bf16.f16";
    expect_refused(m, "ampere fprop: no preset 'ampere.mma.m16n8k16.f32.bf16.bf16.f16'");
    m.units[0].preset[0] = "ada.mma.m16n8k16.f32.bf16.bf16.f32";
    expect_refused(m, "ampere fprop: ada.mma.m16n8k16.f32.bf16.bf16.f32 is another generation's");
  }
  {  // a generation twice, and one mma.h does not have
    Mutant m("mxfp8");
    m.units.push_back(m.units[0]);
    expect_refused(m, "mxfp8: generation blackwell listed twice");
    m.units.back().generation = "rubin";
    expect_refused(m, "mxfp8: generation 'rubin' has no presets");
  }
  {  // power-of-two fp32 scales ride on 1 x 32 E8M0 blocks only where 32 divides the block
    Mutant m("fp8_blockwise");
    m.recipe.gemm[0].a.block = {1, 100};
    expect_refused(m, "blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0 scales 1x32 along K, which does not "
                      "divide the recipe's 1x100 A blocks");
    m.recipe.gemm[0].a.block = {1, 128};
    m.recipe.gemm[0].a.scaling = OperandScaling::block_fp32;  // DeepSeek's scales are not powers of two
    expect_refused(m, "needs block scales for A, the recipe has block_fp32");
  }
  {  // operands that contradict themselves
    Mutant m("nvfp4_4over6");
    m.recipe.gemm[0].b.round = Round::stochastic;
    expect_refused(m, "nvfp4_4over6: fprop B: Four Over Six with the Hadamard transform or stochastic rounding");
    m.recipe.gemm[0].b.round = Round::nearest_even;
    m.recipe.gemm[0].b.scale_format = "float8_e4m3";  // in the catalog, but not NVFP4's scale
    expect_refused(m, "nvfp4_4over6: fprop B: Four Over Six is NVFP4's: E2M1 in blocks of 16 along K, E4M3 scales");
    m.recipe.gemm[0].b.scale_format = "float8_e4m3fn";
    m.recipe.gemm[0].b.block = {16, 32};
    expect_refused(m, "nvfp4_4over6: fprop B: Four Over Six is NVFP4's");
    m.recipe.gemm[0].b.block = {16, 16};
    m.recipe.gemm[0].b.format = "float4_e2m1";
    expect_refused(m, "nvfp4_4over6: fprop B: format 'float4_e2m1' is not in the catalog");
    m.recipe.gemm[0].b.format = "float4_e2m1fn";
    EXPECT_EQ(m.problem(), "");  // restored
  }
  {
    Mutant m("fp8_delayed");
    m.recipe.gemm[2].b.block = {1, 128};
    expect_refused(m, "fp8_delayed: wgrad B: tensor_delayed scaling has a block");
    m.recipe.gemm[2].b.block = {};
    m.recipe.gemm[2].b.scale_format = "float8_e8m0fnu";
    expect_refused(m, "tensor_delayed scaling takes float32 scales, not 'float8_e8m0fnu'");
  }
}

}  // namespace
}  // namespace lplab::kernels
