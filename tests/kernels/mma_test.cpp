// The matrix-unit presets (kernels/mma.h) against MMA-Sim 2.1.1's own outputs:
// the golden file scripts/mmasim-goldens.py wrote from MMA-Sim in a
// development environment (tests/data/mmasim/goldens.bin; LPLAB_MMA_GOLDENS
// names another, as the live test does). Every preset, every output, bit for
// bit; and every model parameter shown to matter: altered by one step, it
// fails against the goldens.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cstdlib>
#include <functional>
#include <map>
#include <cmath>
#include <set>
#include <span>
#include <vector>
#include <tuple>

#include "kernels/mma_goldens.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/mma_step.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/targets.h"
#include "lplab/kernels/tensor_core_step.h"

namespace {

using namespace lplab::kernels;
using lplab::test::MmaGoldens;

const MmaGoldens& goldens() {
  static const MmaGoldens g = [] {
    const char* env = std::getenv("LPLAB_MMA_GOLDENS");
    const std::string path = env && *env ? env : std::string(LPLAB_TEST_DATA_DIR) + "/mmasim/goldens.bin";
    return lplab::test::MmaGoldenReader(path).read();
  }();
  return g;
}

TEST(MmaPresets, every_preset_has_goldens_and_every_golden_a_preset) {
  std::set<std::string> golden;
  for (const auto& p : goldens().presets) golden.insert(p.name);
  std::set<std::string> ours;
  for (const auto& i : mma_instructions()) ours.insert(i.name);
  for (const auto& n : ours) EXPECT_TRUE(golden.count(n)) << n << " has no golden vectors";
  for (const auto& n : golden) EXPECT_TRUE(ours.count(n)) << "goldens of " << n << ", which lplab does not name";
  EXPECT_EQ(ours.size(), mma_instructions().size()) << "two presets share a name";
  // MMA-Sim 2.1.1 models 326 distinct instructions (wgmma's and tcgen05's n and m aside).
  EXPECT_EQ(ours.size(), 326u);
}

TEST(MmaPresets, match_mmasim_bit_for_bit) {
  std::size_t evaluations = 0;
  for (const auto& p : goldens().presets) {
    const MmaInstruction* instr = find_mma_instruction(p.name);
    if (!instr) continue;  // reported above
    ASSERT_EQ(static_cast<int>(p.k), instr->k) << p.name;
    const auto r = lplab::test::compare_preset(goldens(), p, *instr);
    evaluations += r.evaluations;
    EXPECT_EQ(r.differing, 0u) << p.name << " (" << mma_parameters(*instr) << "): " << r.differing << " of "
                               << r.evaluations << " outputs differ from MMA-Sim 2.1.1; the first: " << r.first;
  }
  EXPECT_GE(evaluations, 250000u);
  std::printf("%zu presets, %zu evaluations compared with MMA-Sim 2.1.1\n", goldens().presets.size(), evaluations);
}

// A changed parameter must fail against the goldens: F, L (and G, P), the
// output rounding by one step each. A zero term's exponent acts only where
// every term lies below it, and then on bits far below D's last (fp32's
// 2^-149, fp16's 2^-24): the goldens pin it to a range, not a value (MMA-Sim
// 2.1.1's values are used; docs/matrix-units.md), so it is moved to where
// the outputs tell (-133 -> -126 for fp32 output, -139 -> -100 for fp4).
struct Mutation {
  const char* preset;
  const char* what;
  std::function<void(MmaModel&)> change;
};

TEST(MmaPresets, a_changed_parameter_fails) {
  const std::vector<Mutation> mutations = {
      {"hopper.wgmma.f32.e4m3.e4m3", "F 13 -> 14", [](MmaModel& m) { m.fraction_bits = 14; }},
      {"hopper.wgmma.f32.e4m3.e4m3", "L 32 -> 16", [](MmaModel& m) { m.group = 16; }},
      {"hopper.wgmma.f32.e4m3.e4m3", "RZ E8M13 -> RZ fp32", [](MmaModel& m) { m.rounding = MmaRounding::truncate_fp32; }},
      {"hopper.wgmma.f32.bf16.bf16", "F 25 -> 24", [](MmaModel& m) { m.fraction_bits = 24; }},
      {"hopper.wgmma.f32.bf16.bf16", "e_zero -133 -> -126", [](MmaModel& m) { m.zero_exponent = -126; }},
      {"blackwell.tcgen05.mxf4.block32.f32.e2m1.e2m1.ue8m0", "e_zero -139 -> -100", [](MmaModel& m) { m.zero_exponent = -100; }},
      {"hopper.wgmma.f32.tf32.tf32", "L 8 -> 4", [](MmaModel& m) { m.group = 4; }},
      {"hopper.wgmma.f16.f16.f16", "RNE fp16 -> RZ E8M13", [](MmaModel& m) { m.rounding = MmaRounding::truncate_e8m13; }},
      {"hopper.wgmma.f32.bf16.bf16", "RZ fp32 -> RNE fp32", [](MmaModel& m) { m.rounding = MmaRounding::nearest_fp32; }},
      {"volta.mma.m8n8k4.f32.f16.f16.f32", "F 23 -> 24", [](MmaModel& m) { m.fraction_bits = 24; }},
      {"ampere.mma.m16n8k16.f32.bf16.bf16.f32", "L 8 -> 16", [](MmaModel& m) { m.group = 16; }},
      {"ada.mma.m16n8k32.f32.e4m3.e4m3.f32", "F 13 -> 24", [](MmaModel& m) { m.fraction_bits = 24; }},
      {"rtx_blackwell.mma.m16n8k32.mxf8f6f4.block32.f32.e2m1.e3m2.f32.ue8m0", "F 25 -> 24",
       [](MmaModel& m) { m.fraction_bits = 24; }},
      {"blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3", "F 35 -> 34", [](MmaModel& m) { m.fraction_bits = 34; }},
      {"blackwell.tcgen05.f8f6f4.f32.e3m2.e2m3", "F 25 -> 24", [](MmaModel& m) { m.fraction_bits = 24; }},
      {"cdna3.mfma.f32_32x32x8_bf16", "F 24 -> 23", [](MmaModel& m) { m.fraction_bits = 23; }},
      {"cdna3.mfma.f32_32x32x8_bf16", "L 8 -> 4", [](MmaModel& m) { m.group = 4; }},
      {"cdna3.mfma.f32_16x16x32_fp8_fp8", "F 24 -> 23", [](MmaModel& m) { m.fraction_bits = 23; }},
      {"cdna3.mfma.f32_16x16x32_fp8_fp8", "L 16 -> 8", [](MmaModel& m) { m.group = 8; }},
      {"cdna1.mfma.f32_32x32x8f16", "L 4 -> 8", [](MmaModel& m) { m.group = 8; }},
      {"cdna2.mfma.f32_32x32x4bf16_1k", "P 4 -> 2", [](MmaModel& m) { m.sum_group = 2; }},
      {"cdna2.mfma.f32_16x16x8bf16", "P 2 -> 4", [](MmaModel& m) { m.sum_group = 4; }},
  };
  std::map<std::string, const lplab::test::MmaGoldenPreset*> by_name;
  for (const auto& p : goldens().presets) by_name[p.name] = &p;
  for (const auto& mu : mutations) {
    const MmaInstruction* instr = find_mma_instruction(mu.preset);
    ASSERT_NE(instr, nullptr) << mu.preset;
    ASSERT_TRUE(by_name.count(mu.preset)) << mu.preset;
    MmaInstruction changed = *instr;
    mu.change(changed.model);
    const auto r = lplab::test::compare_preset(goldens(), *by_name[mu.preset], changed);
    EXPECT_GT(r.differing, 0u) << mu.preset << " with " << mu.what << " still matches every golden output";
    std::printf("%-66s %-22s %5zu of %zu outputs differ\n", mu.preset, mu.what, r.differing, r.evaluations);
  }
}

TEST(MmaPresets, names_and_closest_names) {
  const MmaInstruction* w = find_mma_instruction("hopper.wgmma.f32.e4m3.e4m3");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->k, 32);
  EXPECT_EQ(w->model.group, 32);
  EXPECT_EQ(w->model.fraction_bits, 13);
  EXPECT_EQ(mma_parameters(*w), "truncated, L = 32, F = 13, e_zero = -133, RZ E8M13");
  EXPECT_EQ(find_mma_instruction("hopper.wgmma.f32.e4m3.e4m4"), nullptr);
  EXPECT_EQ(closest_mma_instructions("hopper.wgmma.f32.e4m3.e4m4", 1).at(0), "hopper.wgmma.f32.e4m3.e4m3");
  const MmaInstruction* c = find_mma_instruction("cdna3.mfma.f32_32x32x8_bf16");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(mma_parameters(*c), "two_stage, L = 8, F = 24, F2 = 31, RNE fp32");
  EXPECT_EQ(c->isa, "v_mfma_f32_32x32x8_bf16");
}

}  // namespace

namespace {

// The matmul accumulator presets hopper_wgmma_fp8/bf16 (tensor_core_step.h)
// are the wgmma presets chained from C = +0: the same outputs, so the
// goldens above pin them too.
TEST(MmaPresets, the_tensor_core_accumulator_is_the_wgmma_preset) {
  std::uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (const auto& [name, type, model] :
       {std::tuple{"hopper.wgmma.f32.e4m3.e4m3", MmaType::e4m3, accumulators::hopper_wgmma_fp8},
        std::tuple{"hopper.wgmma.f32.bf16.bf16", MmaType::bf16, accumulators::hopper_wgmma_bf16}}) {
    const MmaInstruction* instr = find_mma_instruction(name);
    ASSERT_NE(instr, nullptr);
    const int emin = mma_type_info(type).emin;
    const TensorCoreModel tc{model.block, model.fraction_bits, model.result_bits, model.zero_exponent, 0, emin, emin};
    for (int trial = 0; trial < 2000; ++trial) {
      const std::size_t k = static_cast<std::size_t>(instr->k) * (1 + trial % 4);
      std::vector<double> a(k), b(k);
      std::vector<float> fa(k), fb(k);
      for (std::size_t t = 0; t < k; ++t) {
        std::uint64_t ca = next(), cb = next();
        if (type == MmaType::e4m3) ca &= 0xFF, cb &= 0xFF;
        else ca &= 0xFFFF, cb &= 0xFFFF;
        a[t] = mma_decode(type, ca), b[t] = mma_decode(type, cb);
        fa[t] = static_cast<float>(a[t]), fb[t] = static_cast<float>(b[t]);
      }
      const double want = tensor_core::dot(tc, fa.data(), fb.data(), 1, k);
      const double got = mma_chain(*instr, a, b, 0.0);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << name << " trial " << trial;
      } else {
        EXPECT_EQ(mma_encode(MmaType::f32, got), mma_encode(MmaType::f32, want)) << name << " trial " << trial;
      }
    }
  }
}

}  // namespace

#include "lplab/kernels/matmul.h"

namespace {

// matmul with an instruction accumulator: every output is the instruction
// chained over k (mma_chain), k padded with zeros to whole instructions, and
// with promotion the chains' outputs summed in fp32.
TEST(MmaMatmul, chains_the_instruction_over_k) {
  using lplab::float8_e4m3fn;
  using lplab::bfloat16;
  const std::size_t m = 5, n = 7, k = 100;  // not a multiple of 32
  std::vector<float8_e4m3fn> a(m * k), b(k * n);
  std::uint64_t s = 99;
  const auto next = [&] { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (auto& x : a) x = float8_e4m3fn::from_bits(next() % 0x7E);         // positive finite
  for (auto& x : b) x = float8_e4m3fn::from_bits((next() % 0x7E) | 0);
  for (const char* name : {"hopper.wgmma.f32.e4m3.e4m3", "ada.mma.m16n8k32.f32.e4m3.e4m3.f32",
                           "rtx_blackwell.mma.m16n8k32.f8f6f4.f32.e4m3.e4m3.f32",
                           // fp16 output: the scalar model's chain, not the tensor_core kernel
                           "hopper.wgmma.f16.e4m3.e4m3"}) {
    for (int promote : {0, 64}) {
      const MmaInstruction& instr = *find_mma_instruction(name);
      MatmulOptions o;
      o.accumulator = instruction_accumulator(name).promoted_every(promote);
      std::vector<float> c(m * n);
      matmul(m, n, k, a.data(), b.data(), c.data(), o);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          // The reference: chains of `promote` products (or one), each from +0, summed in fp32.
          const std::size_t kp = 128, len = promote ? 64 : kp;
          std::vector<double> ra(kp, 0.0), rb(kp, 0.0);
          for (std::size_t t = 0; t < k; ++t) ra[t] = static_cast<double>(a[i * k + t]), rb[t] = static_cast<double>(b[t * n + j]);
          float acc = 0.0f;
          double d = 0.0;
          for (std::size_t first = 0; first < kp; first += len) {
            d = mma_chain(instr, std::span(ra).subspan(first, len), std::span(rb).subspan(first, len), 0.0);
            acc += static_cast<float>(d);
          }
          const float want = promote ? acc : static_cast<float>(d);
          EXPECT_EQ(c[i * n + j], want) << name << " promote " << promote << " D[" << i << "][" << j << "]";
        }
    }
  }
  // The label names the instruction; a promotion interval that splits one is refused.
  EXPECT_EQ(accumulator_label(instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3").promoted_every(128)),
            "hopper.wgmma.f32.e4m3.e4m3 promoted every 128");
  MatmulOptions bad;
  bad.accumulator = instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3").promoted_every(48);
  std::vector<float> c(m * n);
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), c.data(), bad), std::invalid_argument);
}

// Every preset's matmul -- the SIMD kernels where its model has one
// (truncated and scaled: tensor_core_simd.cpp; fma, ftz_pairs and exact:
// mma_simd.cpp), mma::chain elsewhere -- against the presets' scalar chain,
// output by output, on every SIMD target: signed operands drawn from every
// code of their type (subnormals, zeros, the largest values, so that fp16
// sums overflow) and near 1, an infinity and a NaN among them where the
// type has one, block scales over 2^-30 .. 2^30 with the extremes, a k that
// is not a whole number of instructions (where there are no scales), 67
// columns (whole tiles of 4 vectors of 16 floats and a ragged last vector),
// 5 rows (whole tiles and a ragged last one), products that
// are all zero, products that cancel over a block, products below fp32's
// smallest normal, blocks of large products of one sign and a column of
// zero products after tiny Cs, with and without an input C and promotion.

// The finite values of a narrow type, sorted; a sample rounds to the nearest.
std::vector<double> finite_values(MmaType t) {
  std::vector<double> v;
  const int bits = mma_type_info(t).bits;
  for (std::uint64_t code = 0; code < (std::uint64_t{1} << bits); ++code)
    if (const double x = mma_decode(t, code); std::isfinite(x)) v.push_back(x);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

struct ValueSource {
  std::uint64_t s;
  bool any_code = true;  // false: values near 1 only
  std::uint64_t next() { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 33; }
  // A value type t holds: zero, any finite value, or one near 1 (2^-4 .. 2^4).
  double value(MmaType t) {
    if (next() % 9 == 0) return 0.0;
    const double sign = next() % 2 ? -1.0 : 1.0;
    const bool wide = next() % 3 == 0 && any_code;
    if (t == MmaType::f32 || t == MmaType::tf32 || t == MmaType::f64) {
      const double u = 1.0 + static_cast<double>(next() % (1 << 20)) / (1 << 20);
      const int e = wide ? -150 + static_cast<int>(next() % 200) : -4 + static_cast<int>(next() % 9);
      const double x = sign * std::ldexp(u, e);
      if (t == MmaType::f64) return x;
      const auto f = static_cast<float>(x);
      if (t == MmaType::f32) return f;
      return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) & ~0x1FFFu);  // tf32
    }
    const std::vector<double>& v = values_of(t);
    if (wide) return v[next() % v.size()];
    const double x = sign * std::ldexp(1.0 + static_cast<double>(next() % 1024) / 1024.0,
                                       -4 + static_cast<int>(next() % 9));
    const auto it = std::lower_bound(v.begin(), v.end(), x);
    if (it == v.end()) return v.back();
    if (it == v.begin()) return *it;
    return x - *(it - 1) < *it - x ? *(it - 1) : *it;
  }
  static const std::vector<double>& values_of(MmaType t) {
    static std::map<MmaType, std::vector<double>> cache;
    auto [it, added] = cache.try_emplace(t);
    if (added) it->second = finite_values(t);
    return it->second;
  }
};

// any_code false: operands near 1 (2^-4 .. 2^4) and zeros only, as N(0,1)
// data is (the float-lane kernel takes bf16 and tf32 operands of that range).
void expect_matmul_equals_scalar_chain(const MmaInstruction& instr, std::uint64_t seed, bool any_code) {
  const bool scaled = instr.scale != MmaType::none;
  const std::size_t K = static_cast<std::size_t>(instr.k);
#if defined(LPLAB_SANITIZED)
  // (Under the sanitizers, which look for memory errors, half the depth: the
  // 64 products the rows below arrange and several blocks past them.)
  const std::size_t m = 5, n = 67, k = scaled ? 4 * K : 100;
#else
  const std::size_t m = 5, n = 67, k = scaled ? 4 * K : 200;
#endif
  const std::size_t kp = (k + K - 1) / K * K;
  ValueSource src{seed, any_code};
  std::vector<float> a(m * k), b(k * n);
  for (float& x : a) x = static_cast<float>(src.value(instr.a));
  for (float& x : b) x = static_cast<float>(src.value(instr.b));
  // A row whose first 32 products are all zero, and one whose products
  // 32 .. 63 cancel in pairs (a zero group that keeps its scales' exponent).
  for (std::size_t t = 0; t < 32; ++t) a[2 * k + t] = 0.0f;
  for (std::size_t t = 32; t < 64; t += 2) {
    a[3 * k + t + 1] = -a[3 * k + t];
    for (std::size_t j = 0; j < n; ++j) b[(t + 1) * n + j] = b[t * n + j];
  }
  // Row 4 of A and column 1 of B scaled by 2^-66 where the types hold it:
  // products below fp32's smallest normal (ftz_pairs flushes them).
  for (std::size_t t = 0; t < k; ++t) {
    const float x = std::ldexp(a[4 * k + t], -66), y = std::ldexp(b[t * n + 1], -66);
    if (mma_holds(instr.a, x)) a[4 * k + t] = x;
    if (mma_holds(instr.b, y)) b[t * n + 1] = y;
  }
  // Row 0 of A and column 10 of B, over the first 64 products: the type's
  // largest value below 2, of one sign, so that a block's products (each
  // near 4) sum past int32 on the grid of the narrow kernel with F = 25
  // (which then sums that block in double).
  const auto below_2 = [](MmaType t) {
    if (mma_type_info(t).bits > 16) return 0x1.ffcp0f;  // 2 - 2^-10: tf32's, fp32's and fp64's
    const std::vector<double>& v = ValueSource::values_of(t);
    return static_cast<float>(*(std::lower_bound(v.begin(), v.end(), 2.0) - 1));
  };
  for (std::size_t t = 0; t < std::min<std::size_t>(k, 64); ++t) a[t] = below_2(instr.a), b[t * n + 10] = below_2(instr.b);
  if (mma_holds(instr.a, INFINITY)) a[1 * k + 5] = INFINITY;
  if (mma_holds(instr.b, NAN)) b[7 * n + 3] = NAN;
  if (mma_holds(instr.b, -INFINITY)) b[9 * n + 20] = -INFINITY;
  // Block scales (A's m x blocks, B's n x blocks): powers of two, and for
  // ue4m3 any value.
  const std::size_t blk = scaled ? static_cast<std::size_t>(instr.model.scale_block) : 1;
  std::vector<float> sa(scaled ? m * k / blk : 0), sb(scaled ? n * k / blk : 0);
  for (auto* s : {&sa, &sb})
    for (float& x : *s) {
      x = instr.scale == MmaType::ue8m0 ? std::ldexp(1.0f, -30 + static_cast<int>(src.next() % 61))
                                        : static_cast<float>(std::fabs(src.value(instr.scale)));
      if (src.next() % 50 == 0) x = instr.scale == MmaType::ue8m0 ? 0x1p127f : 448.0f;
      if (src.next() % 50 == 0) x = instr.scale == MmaType::ue8m0 ? 0x1p-127f : 0.0f;
    }
  // An input C of the instruction's C type, an infinity among it.
  std::vector<double> c_in(m * n);
  for (double& x : c_in) x = src.value(instr.c);
  if (mma_holds(instr.c, -INFINITY)) c_in[2 * n + 30] = -INFINITY;
  // Column 12 of B zero, so that D there is C through every block; tiny Cs
  // in it (C 2^(F - E) with F - E past 126: the narrow kernel shifts C's
  // significand there).
  for (std::size_t t = 0; t < k; ++t) b[t * n + 12] = 0.0f;
  for (const auto& [row, x] : {std::pair{0, 0x1.fffffep-110}, {1, -0x1.800002p-118}, {2, 0x1p-149}, {3, 0x1.234566p-127}})
    if (mma_holds(instr.c, x)) c_in[static_cast<std::size_t>(row) * n + 12] = x;
  for (int promote : {0, 2 * instr.k})
    for (bool with_c : {false, true}) {
      MatmulOptions o;
      o.accumulator = instruction_accumulator(instr.name).promoted_every(promote);
      o.c_input = with_c ? c_in.data() : nullptr;
      const OperandRange r{};
      const MatmulProblem p{m, n, k, a.data(), b.data(), r, r};
      std::vector<double> want(m * n);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          std::vector<double> ra(kp, 0.0), rb(kp, 0.0), qa(kp / blk, 1.0), qb(kp / blk, 1.0);
          for (std::size_t t = 0; t < k; ++t) ra[t] = a[i * k + t], rb[t] = b[t * n + j];
          for (std::size_t q = 0; q < k / blk && scaled; ++q) qa[q] = sa[i * k / blk + q], qb[q] = sb[j * k / blk + q];
          const std::size_t len = promote ? static_cast<std::size_t>(promote) : kp;
          float acc = 0.0f;
          double d = 0.0;
          for (std::size_t first = 0; first < kp; first += len) {
            const std::size_t here = std::min(len, kp - first);
            // C enters the first instruction (of the first chain).
            const double c = with_c && first == 0 ? c_in[i * n + j] : 0.0;
            std::span<const double> qa_here, qb_here;
            if (scaled) qa_here = std::span(qa).subspan(first / blk, here / blk), qb_here = std::span(qb).subspan(first / blk, here / blk);
            d = mma_chain(instr, std::span(ra).subspan(first, here), std::span(rb).subspan(first, here), c, qa_here,
                          qb_here);
            acc += static_cast<float>(d);
          }
          want[i * n + j] = promote ? acc : d;
        }
      for (const SimdTarget& t : simd_targets()) {
        ScopedSimdTarget pin(t.id);
        std::vector<double> got(m * n);
        if (scaled)
          matmul_block_scaled_instruction(p, sa.data(), sb.data(), static_cast<int>(blk), static_cast<int>(blk),
                                          mma_format_name(instr.scale), mma_format_name(instr.scale), o,
                                          got.data());
        else
          matmul_accumulate(p, o, got.data());
        for (std::size_t i = 0; i < m * n; ++i) {
          const bool same = std::isnan(want[i]) ? std::isnan(got[i])
                                                : std::bit_cast<std::uint64_t>(got[i]) ==
                                                      std::bit_cast<std::uint64_t>(want[i]);
          ASSERT_TRUE(same) << instr.name << " on " << t.name << " promote " << promote << (with_c ? " with C" : "")
                            << " D[" << i / n << "][" << i % n << "] = " << got[i] << ", the scalar chain "
                            << want[i];
        }
      }
    }
}

TEST(MmaMatmul, every_preset_equals_the_scalar_chain_on_every_target) {
  // Presets of one model, operand types and k run the same code: one each.
  std::set<std::string> seen;
  std::uint64_t seed = 1;
  for (const MmaInstruction& instr : mma_instructions()) {
    const std::string key = mma_parameters(instr) + "/" + std::string(lplab::enum_name(instr.a)) + "." +
                            std::string(lplab::enum_name(instr.b)) + "." + std::string(lplab::enum_name(instr.c)) + "." +
                            std::string(lplab::enum_name(instr.d)) + "." + std::string(lplab::enum_name(instr.scale)) + "/" +
                            std::to_string(instr.k);
    if (!seen.insert(key).second) continue;
    SCOPED_TRACE(instr.name);
#if defined(LPLAB_SANITIZED)
    // Under the sanitizers (memory and undefined behaviour; the release build
    // checks both value sources on every preset) one source each, in turn.
    expect_matmul_equals_scalar_chain(instr, seed, seed % 2 == 1);
    ++seed;
#else
    for (bool any_code : {true, false}) expect_matmul_equals_scalar_chain(instr, seed++, any_code);
#endif
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(seen.size(), 100u);
}

// The narrow kernel's AVX-512 and AVX2 step 4 for fp16 D serves plain
// blocks alone (tensor_core_narrow.cpp): it holds for every preset with fp16
// C and D, which has no block scales, F >= 2, and F - 126 at or below both a
// zero term's exponent and fp16's least normal one (E, the largest exponent
// of a block's terms, C's among them, is at least either).
TEST(MmaMatmul, every_fp16_output_block_is_plain_in_the_narrow_kernel) {
  int seen = 0;
  for (const MmaInstruction& instr : mma_instructions()) {
    const MmaModel& m = instr.model;
    if (m.rounding != MmaRounding::nearest_fp16) continue;
    SCOPED_TRACE(instr.name);
    ++seen;
    EXPECT_EQ(m.scale_block, 0);
    EXPECT_GE(m.fraction_bits, 2);
    EXPECT_GE(std::min(m.zero_exponent, m.emin_d), m.fraction_bits - 126);
  }
  EXPECT_GT(seen, 10);
}

// A block whose sum passes 2^128 is an infinity where D is fp32, on every
// target, and so is every block after it (a special C): in lane 0 of a
// tile whose other lanes are quiet (C and products near 1), C the largest
// float and 4 products of (1.5 x 2^59)^2 (bf16 and tf32 values the float
// lanes take). The narrow kernel scales a quiet block's sum by one
// multiplication toward zero, which would leave the largest float.
TEST(MmaMatmul, an_fp32_block_sum_past_2_128_is_an_infinity_on_every_target) {
  const std::size_t m = 4, n = 32, k = 64;
  for (const char* name : {"ampere.mma.m16n8k8.f32.tf32.tf32.f32", "ampere.mma.m16n8k16.f32.bf16.bf16.f32",
                           "hopper.wgmma.f32.bf16.bf16"}) {
    SCOPED_TRACE(name);
    std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f);
    for (std::size_t t = 0; t < 4; ++t) a[t] = 0x1.8p59f, b[t * n] = 0x1.8p59f;
    std::vector<double> c(m * n, 0.75);
    c[0] = FLT_MAX;
    const OperandRange r{};
    const MatmulProblem p{m, n, k, a.data(), b.data(), r, r};
    MatmulOptions o;
    o.accumulator = instruction_accumulator(name);
    o.c_input = c.data();
    const MmaInstruction& instr = *find_mma_instruction(name);
    std::vector<double> want(m * n);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::vector<double> ra(k), rb(k);
        for (std::size_t t = 0; t < k; ++t) ra[t] = a[i * k + t], rb[t] = b[t * n + j];
        want[i * n + j] = mma_chain(instr, ra, rb, c[i * n + j], {}, {});
      }
    ASSERT_EQ(want[0], INFINITY);
    for (const SimdTarget& t : simd_targets()) {
      ScopedSimdTarget pin(t.id);
      std::vector<double> got(m * n);
      matmul_accumulate(p, o, got.data());
      for (std::size_t i = 0; i < m * n; ++i) ASSERT_EQ(got[i], want[i]) << t.name << " D[" << i / n << "][" << i % n << "]";
    }
  }
}

// A zero C's exponent (zero_exponent) decides a block's grid where every
// product lies below the output's least normal exponent. Volta's fp16 mma
// (L = 4, F = 23, zero_exponent -19, emin_out -14), C = 0, the products
// 2^-8 2^-7 = 2^-15, 2^-12 2^-13 = 2^-25 and 2^-24 2^-14 = 2^-38 (the
// subnormal's exponent counted at -14: -28): E = -15, the grid 2^-38 keeps
// all three, and 2^-15 + 2^-25 + 2^-38 rounds up to 513 x 2^-24 in
// binary16. Counting the zero C at emin_out (E = -14, grid 2^-37) would
// drop 2^-38 and leave a tie, rounded to even: 2^-15.
TEST(MmaMatmul, a_zero_c_exponent_decides_the_grid_of_tiny_products_on_every_target) {
  const std::vector<float> a{0x1p-8f, 0x1p-12f, 0x1p-24f, 0.0f}, b{0x1p-7f, 0x1p-13f, 0x1p-14f, 0.0f};
  const std::vector<double> c{0.0};
  const OperandRange r{};
  const MatmulProblem p{1, 1, 4, a.data(), b.data(), r, r};
  const char* name = "volta.mma.m8n8k4.f16.f16.f16.f16";
  MatmulOptions o;
  o.accumulator = instruction_accumulator(name);
  o.c_input = c.data();
  const std::vector<double> ra(a.begin(), a.end()), rb(b.begin(), b.end());
  EXPECT_EQ(mma_chain(*find_mma_instruction(name), ra, rb, 0.0, {}, {}), 513 * 0x1p-24);
  for (const SimdTarget& t : simd_targets()) {
    ScopedSimdTarget pin(t.id);
    double d = 0.0;
    matmul_accumulate(p, o, &d);
    EXPECT_EQ(d, 513 * 0x1p-24) << t.name;
  }
}

// ftz_pairs flushes every sum below 2^-126, C's included: a C of 2^-126 +
// 2^-149 (its lowest bit below 2^-126) and, in the instruction's last
// group, the product -2^-63 2^-63 = -2^-126 leave 2^-149, flushed to +0.
// (A tile whose products and C are all multiples of 2^-126 skips the
// flushes: C's lowest bit must count.)
TEST(MmaMatmul, ftz_pairs_flushes_a_sum_with_c_below_2_126_on_every_target) {
  for (const char* name : {"cdna2.mfma.f32_32x32x8bf16_1k", "cdna2.mfma.f32_32x32x4bf16"}) {
    SCOPED_TRACE(name);
    const MmaInstruction& instr = *find_mma_instruction(name);
    const auto k = static_cast<std::size_t>(instr.k);
    std::vector<float> a(k, 0.0f), b(k, 0.0f);
    a[k - 1] = -0x1p-63f, b[k - 1] = 0x1p-63f;
    const std::vector<double> c{0x1.000002p-126};
    const OperandRange r{};
    const MatmulProblem p{1, 1, k, a.data(), b.data(), r, r};
    MatmulOptions o;
    o.accumulator = instruction_accumulator(name);
    o.c_input = c.data();
    const std::vector<double> ra(a.begin(), a.end()), rb(b.begin(), b.end());
    const double want = mma_chain(instr, ra, rb, c[0], {}, {});
    EXPECT_EQ(std::bit_cast<std::uint64_t>(want), 0u);  // +0
    for (const SimdTarget& t : simd_targets()) {
      ScopedSimdTarget pin(t.id);
      double d = 1.0;
      matmul_accumulate(p, o, &d);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(d), 0u) << t.name << ": " << d;
    }
  }
}

// A block whose sum, in units of its grid, has 25 significant bits just
// below a power of two: the narrow kernel's step 4 in int32 lanes finds the
// leading bit from a conversion to float that rounds up to 2^25 there.
// Volta's fp32 mma (L = 4, F = 23, truncation to 24 bits): C = 4 - 2^-22
// (24 bits, exponent 1) and the products 1.5 x 2 = 3 (exponent 0 + 1) and
// 1 x 1 fix E = 1, so the units are 2^24 - 1 + 3 2^22 + 2^22 = 2^25 - 1;
// truncated to 24 bits, 2^25 - 2 units of 2^-22: D = 8 - 2^-21 (a lead
// bit taken from the rounded conversion would keep 2^25 - 4: 8 - 2^-20).
TEST(MmaMatmul, a_block_sum_just_below_a_power_of_two_truncates_to_24_bits_on_every_target) {
  const std::vector<float> a{1.5f, 1.0f, 0.0f, 0.0f}, b{2.0f, 1.0f, 0.0f, 0.0f};
  const std::vector<double> c{0x1.fffffep1};
  const OperandRange r{};
  const MatmulProblem p{1, 1, 4, a.data(), b.data(), r, r};
  MatmulOptions o;
  o.accumulator = instruction_accumulator("volta.mma.m8n8k4.f32.f16.f16.f32");
  o.c_input = c.data();
  const MmaInstruction& instr = *find_mma_instruction("volta.mma.m8n8k4.f32.f16.f16.f32");
  const std::vector<double> ra(a.begin(), a.end()), rb(b.begin(), b.end());
  EXPECT_EQ(mma_chain(instr, ra, rb, c[0], {}, {}), 0x1.fffffep2);
  for (const SimdTarget& t : simd_targets()) {
    ScopedSimdTarget pin(t.id);
    double d = 0.0;
    matmul_accumulate(p, o, &d);
    EXPECT_EQ(d, 0x1.fffffep2) << t.name;
  }
}

TEST(MmaMatmul, an_input_c_is_the_instructions_and_of_its_type) {
  using lplab::float16;
  const std::size_t m = 2, n = 2, k = 16;
  std::vector<float16> a(m * k, float16(1.0f)), b(k * n, float16(0.5f));
  // 16 x 0.5 = 8, plus C: 1000 + 8, -8 + 8 = +0, and 2048 + 8 = 2056 in fp16 (a multiple of 2 there).
  const std::vector<double> c{1000.0, -8.0, 2048.0, 0.0};
  std::vector<float> d(m * n);
  MatmulOptions o;
  o.accumulator = instruction_accumulator("hopper.wgmma.f16.f16.f16");
  o.c_input = c.data();
  matmul(m, n, k, a.data(), b.data(), d.data(), o);
  EXPECT_EQ(d, (std::vector<float>{1008.0f, 0.0f, 2056.0f, 8.0f}));
  EXPECT_FALSE(std::signbit(d[1]));
  // A C the type does not hold, and a C for an accumulator that takes none.
  const std::vector<double> tiny{1e-30, 0, 0, 0};
  o.c_input = tiny.data();
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), d.data(), o), std::invalid_argument);
  MatmulOptions fp32;
  fp32.c_input = c.data();
  EXPECT_THROW(matmul(m, n, k, a.data(), b.data(), d.data(), fp32), std::invalid_argument);
  // No products (k = 0): D is C, with or without promotion; the tensor-core
  // accumulator and an fp32 instruction give +0 (the SIMD kernel declines k = 0).
  for (int promote : {0, 64}) {
    o.c_input = c.data();
    o.accumulator = instruction_accumulator("hopper.wgmma.f16.f16.f16").promoted_every(promote);
    matmul(m, n, 0, a.data(), b.data(), d.data(), o);
    EXPECT_EQ(d, (std::vector<float>{1000.0f, -8.0f, 2048.0f, 0.0f})) << promote;
  }
  for (const AccumulatorModel& model : {AccumulatorModel(Accumulator::tensor_core),
                                        instruction_accumulator("hopper.wgmma.f32.f16.f16")}) {
    MatmulOptions z;
    z.accumulator = model;
    d.assign(m * n, -1.0f);
    matmul(m, n, 0, a.data(), b.data(), d.data(), z);
    EXPECT_EQ(d, std::vector<float>(m * n, 0.0f));
  }
}

TEST(MmaMatmul, refuses_operands_the_instruction_cannot_read) {
  using lplab::bfloat16;
  std::vector<bfloat16> a(4 * 32, bfloat16(1.0f)), b(32 * 4, bfloat16(1.0f));
  a[5] = bfloat16(0.3f);  // not an E4M3 value
  std::vector<float> c(16, -1.0f);
  MatmulOptions o;
  o.accumulator = instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3");
  try {
    matmul(4, 4, 32, a.data(), b.data(), c.data(), o);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A[0][5] = 0.30"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not a value of e4m3, which hopper.wgmma.f32.e4m3.e4m3 takes"),
              std::string::npos) << e.what();
  }
  for (float x : c) EXPECT_EQ(x, -1.0f) << "an output was written";
  // bf16 values that are E4M3 values are fine.
  a[5] = bfloat16(0.3125f);
  EXPECT_NO_THROW(matmul(4, 4, 32, a.data(), b.data(), c.data(), o));
  EXPECT_EQ(c[0], 32.0f - 1.0f + 0.3125f);
  // A block-scaled instruction takes block-scaled operands.
  o.accumulator = instruction_accumulator("blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0");
  EXPECT_THROW(matmul(4, 4, 32, a.data(), b.data(), c.data(), o), std::invalid_argument);
}

}  // namespace

#include "lplab/kernels/scaling.h"

namespace {

// Block-scaled instructions on operands quantized by lplab's MX and NVFP4
// schemes: the elements and scales go to the instruction apart, and each
// output is the instruction's chain (mma_chain) over the decoded elements
// and scales, divided by the tensor scales.
// Values in [-8, 8) with 20 fraction bits from a 64-bit LCG (Knuth's MMIX constants).
struct Lcg {
  std::uint64_t s;
  float operator()() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<std::int64_t>(s >> 40) - (1 << 23)) / static_cast<float>(1 << 20);
  }
};

// One output's inputs to the instruction's chain: A's row and B^T's row of k
// decoded elements, and the k / bs scales their 1 x bs slices take.
struct ChainInputs {
  std::vector<double> a, b, scale_a, scale_b;
};
template <class E, class SA, class SB>
ChainInputs chain_inputs(const E* a_row, const E* b_row, const SA* a_scales, const SB* b_scales, std::size_t k,
                         std::size_t bs) {
  ChainInputs in{std::vector<double>(k), std::vector<double>(k), std::vector<double>(k / bs),
                 std::vector<double>(k / bs)};
  for (std::size_t t = 0; t < k; ++t) in.a[t] = static_cast<double>(a_row[t]), in.b[t] = static_cast<double>(b_row[t]);
  for (std::size_t q = 0; q < k / bs; ++q)
    in.scale_a[q] = static_cast<double>(a_scales[q]), in.scale_b[q] = static_cast<double>(b_scales[q]);
  return in;
}

template <class Scale>
void check_block_scaled(const lplab::kernels::BlockScaling<lplab::float4_e2m1fn, Scale>& scheme, const char* name) {
  const std::size_t m = 3, n = 4, k = 128;
  std::vector<float> x(m * k), y(n * k);
  Lcg next{7};
  for (auto& v : x) v = next();
  for (auto& v : y) v = next() * 0.01f;
  const std::size_t bs = static_cast<std::size_t>(scheme.block_size);
  std::vector<lplab::float4_e2m1fn> ea(m * k), eb(n * k);
  std::vector<Scale> sa(m * k / bs), sb(n * k / bs);
  float ta = 1.0f, tb = 1.0f;
  quantize(scheme, std::span<const float>(x), std::span(ea), std::span(sa), &ta);
  quantize(scheme, std::span<const float>(y), std::span(eb), std::span(sb), &tb);
  MatmulOptions o;
  o.accumulator = instruction_accumulator(name);
  std::vector<float> c(m * n);
  matmul(m, n, k, BlockScaledOperand<lplab::float4_e2m1fn, Scale>{scheme, ea.data(), sa.data(), ta},
         BlockScaledOperand<lplab::float4_e2m1fn, Scale>{scheme, eb.data(), sb.data(), tb}, c.data(), o);
  const MmaInstruction& instr = *find_mma_instruction(name);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      const auto [a, b, qa, qb] = chain_inputs(&ea[i * k], &eb[j * k], &sa[i * k / bs], &sb[j * k / bs], k, bs);
      const double d = mma_chain(instr, a, b, 0.0, qa, qb);
      const auto want = static_cast<float>(d / (static_cast<double>(ta) * static_cast<double>(tb)));
      EXPECT_EQ(c[i * n + j], want) << name << " D[" << i << "][" << j << "]";
      // And near the exact product of the dequantized operands.
      double exact = 0;
      for (std::size_t t = 0; t < k; ++t)
        exact += a[t] * qa[t / bs] * b[t] * qb[t / bs] / (static_cast<double>(ta) * static_cast<double>(tb));
      EXPECT_NEAR(c[i * n + j], exact, 1e-5 * std::abs(exact) + 1e-30) << name;
    }
}

// NVFP4 training's weights in 16 x 16 blocks (B, n = 40 rows: two whole
// block rows and a partial one) against 1 x 16 activations (A): each 1 x 16
// slice of B row j takes block (j / 16, q)'s scale, as Transformer Engine
// repeats it on each row. The expected output is the instruction's chain on
// the scales read from the block grid here, apart from row_scales.
TEST(MmaMatmul, block_scaled_instructions_take_16x16_weights) {
  const char* name = "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3";
  const std::size_t m = 3, n = 40, k = 64, bs = 16;
  std::vector<float> x(m * k), y(n * k);
  Lcg next{11};
  for (auto& v : x) v = next();
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t t = 0; t < k; ++t) y[j * k + t] = next() * (j % 7 == 0 ? 8.0f : 0.01f);
  std::vector<lplab::float4_e2m1fn> ea(m * k), eb(n * k);
  std::vector<lplab::float8_e4m3fn> sa(m * k / bs), sb(scales_needed(nvfp4_2d, n * k, k));
  ASSERT_EQ(sb.size(), 3 * k / bs);
  float ta = 1.0f, tb = 1.0f;
  quantize(nvfp4, std::span<const float>(x), std::span(ea), std::span(sa), &ta);
  quantize(nvfp4_2d, std::span<const float>(y), k, std::span(eb), std::span(sb), &tb);
  MatmulOptions o;
  o.accumulator = instruction_accumulator(name);
  std::vector<float> c(m * n), c_exact(m * n);
  using Op = BlockScaledOperand<lplab::float4_e2m1fn, lplab::float8_e4m3fn>;
  matmul(m, n, k, Op{nvfp4, ea.data(), sa.data(), ta}, Op{nvfp4_2d, eb.data(), sb.data(), tb}, c.data(), o);
  MatmulOptions exact;
  exact.accumulator.kind = Accumulator::fp64;
  matmul(m, n, k, Op{nvfp4, ea.data(), sa.data(), ta}, Op{nvfp4_2d, eb.data(), sb.data(), tb}, c_exact.data(),
         exact);
  const MmaInstruction& instr = *find_mma_instruction(name);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      // Row j's slices take block (j / 16, q)'s scale.
      const auto [a, b, qa, qb] =
          chain_inputs(&ea[i * k], &eb[j * k], &sa[i * k / bs], &sb[(j / 16) * (k / bs)], k, bs);
      const double d = mma_chain(instr, a, b, 0.0, qa, qb);
      EXPECT_EQ(c[i * n + j], static_cast<float>(d / (static_cast<double>(ta) * static_cast<double>(tb))))
          << "D[" << i << "][" << j << "]";
      double sum = 0, magnitude = 0;
      for (std::size_t t = 0; t < k; ++t) {
        sum += a[t] * qa[t / bs] * b[t] * qb[t / bs];
        magnitude += std::abs(a[t] * qa[t / bs] * b[t] * qb[t / bs]);
      }
      const double ts = static_cast<double>(ta) * static_cast<double>(tb);
      // The fp64 path sums dequantize()'s float values (element x scale / s_enc,
      // each rounded once: a product's relative error at most 2^-23).
      EXPECT_NEAR(c_exact[i * n + j], sum / ts, 0x1p-22 * magnitude / ts + 0x1p-24 * std::abs(sum / ts))
          << "exact D[" << i << "][" << j << "]";
    }
}

TEST(MmaMatmul, block_scaled_instructions_take_mx_and_nvfp4_operands) {
  check_block_scaled(mxfp4, "blackwell.tcgen05.mxf4.block32.f32.e2m1.e2m1.ue8m0");
  check_block_scaled(mxfp4, "rtx_blackwell.mma.m16n8k64.mxf4nvf4.block32.f32.e2m1.e2m1.f32.ue8m0");
  check_block_scaled(nvfp4, "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3");
  // The scheme must be the instruction's: MXFP4's 32-element E8M0 blocks
  // into a 16-element E4M3 instruction are refused.
  std::vector<lplab::float4_e2m1fn> e(64);
  std::vector<lplab::float8_e8m0fnu> s(2, lplab::float8_e8m0fnu(1.0f));
  std::vector<float> c(1);
  MatmulOptions o;
  o.accumulator = instruction_accumulator("blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3");
  using Op = BlockScaledOperand<lplab::float4_e2m1fn, lplab::float8_e8m0fnu>;
  EXPECT_THROW(matmul(1, 1, 64, Op{mxfp4, e.data(), s.data()}, Op{mxfp4, e.data(), s.data()}, c.data(), o),
               std::invalid_argument);
  o.accumulator = instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3");  // not block-scaled
  EXPECT_THROW(matmul(1, 1, 64, Op{mxfp4, e.data(), s.data()}, Op{mxfp4, e.data(), s.data()}, c.data(), o),
               std::invalid_argument);
}

// fp32 block scales on Hopper's FP8 wgmma (DeepSeek-V3 and DeepGEMM): each
// block of 128 along K is chained from C = +0, and its D promoted into fp32
// as fma(s_a * s_b, D, promoted). Hand-derived: block 0's D is -(1 + 2^-11)
// (scale 1), block 1's 1 + 2^-12 with scale 1 + 2^-12. Fused, the promotion
// gives (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly; a product rounded before
// the addition (1 + 2^-11 + 2^-24 is a tie, to even 1 + 2^-11) would give 0.
TEST(MmaMatmul, fp32_block_scales_are_fused_into_each_promotion) {
  using E = lplab::float8_e4m3fn;
  using S = lplab::float32;
  const std::size_t k = 256;
  std::vector<E> a(k, E(0.0f)), b(k, E(0.0f));
  a[0] = E(-1.0f), a[1] = E(-0x1p-6f), b[0] = E(1.0f), b[1] = E(0x1p-5f);          // -(1 + 2^-11)
  a[128] = E(1.0f), a[129] = E(0x1p-6f), b[128] = E(1.0f), b[129] = E(0x1p-6f);    // 1 + 2^-12
  const std::vector<S> sa = {S(1.0f), S(1.0f + 0x1p-12f)}, sb = {S(1.0f), S(1.0f)};
  MatmulOptions o;
  o.accumulator = instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3");
  float c = -1;
  using Op = BlockScaledOperand<E, S>;
  matmul(1, 1, k, Op{deepseek_1x128, a.data(), sa.data()}, Op{deepseek_128x128, b.data(), sb.data()}, &c, o);
  EXPECT_EQ(c, 0x1p-24f);
  // promote_every must be the blocks' 128 (or unset); no input C.
  o.accumulator = o.accumulator.promoted_every(64);
  EXPECT_THROW(matmul(1, 1, k, Op{deepseek_1x128, a.data(), sa.data()}, Op{deepseek_1x128, b.data(), sb.data()}, &c, o),
               std::invalid_argument);
}

// Random operands in DeepSeek-V3's tiles (A: 1 x 128, B^T: 128 x 128 over
// n = 130 rows, a partial block row) on Hopper's E4M3 wgmma: every output
// equals mma::chain with the promotion scales (the scalar reference), with
// promote_every unset and 128, and lies near the exact product.
TEST(MmaMatmul, fp32_block_scales_match_the_scalar_chain) {
  using E = lplab::float8_e4m3fn;
  using S = lplab::float32;
  const std::size_t m = 3, n = 130, k = 384, blocks = k / 128;
  std::vector<float> x(m * k), y(n * k);
  Lcg next{21};
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = next() * (i % 128 < 64 ? 1.0f : 1e-3f);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = next() * (i / k >= 128 ? 300.0f : 1.0f);
  std::vector<E> ea(m * k), eb(n * k);
  std::vector<S> sa(scales_needed(deepseek_1x128, m * k, k)), sb(scales_needed(deepseek_128x128, n * k, k));
  ASSERT_EQ(sb.size(), 2 * blocks);
  quantize(deepseek_1x128, std::span<const float>(x), k, std::span(ea), std::span(sa));
  quantize(deepseek_128x128, std::span<const float>(y), k, std::span(eb), std::span(sb));
  using Op = BlockScaledOperand<E, S>;
  {
    const char* name = "hopper.wgmma.f32.e4m3.e4m3";
    const MmaInstruction& instr = *find_mma_instruction(name);
    for (int every : {0, 128}) {
      MatmulOptions o;
      o.accumulator = instruction_accumulator(name).promoted_every(every);
      std::vector<float> c(m * n);
      matmul(m, n, k, Op{deepseek_1x128, ea.data(), sa.data()}, Op{deepseek_128x128, eb.data(), sb.data()},
             c.data(), o);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          std::vector<double> ra(k), rb(k);
          std::vector<float> s(blocks);
          double exact = 0, magnitude = 0;
          for (std::size_t t = 0; t < k; ++t) {
            ra[t] = static_cast<double>(ea[i * k + t]), rb[t] = static_cast<double>(eb[j * k + t]);
            const double p = ra[t] * static_cast<double>(sa[i * blocks + t / 128]) * rb[t] *
                             static_cast<double>(sb[(j / 128) * blocks + t / 128]);
            exact += p, magnitude += std::abs(p);
          }
          for (std::size_t q = 0; q < blocks; ++q)
            s[q] = static_cast<float>(sa[i * blocks + q]) * static_cast<float>(sb[(j / 128) * blocks + q]);
          const double d = mma::chain(instr.model, ra.data(), rb.data(), k, 0.0, nullptr, nullptr, 128, nullptr,
                                      s.data());
          ASSERT_EQ(c[i * n + j], static_cast<float>(d)) << name << " every " << every << " D[" << i << "][" << j << "]";
          EXPECT_NEAR(c[i * n + j], exact, 0x1p-11 * magnitude) << name << " D[" << i << "][" << j << "]";
        }
    }
  }
}

}  // namespace
