// The accumulation presets and the one check of a model
// (lplab/kernels/accumulator.h).
#include "lplab/kernels/accumulator.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace lplab::kernels {

const char* accumulator_name(Accumulator a) {
  switch (a) {
    case Accumulator::fp64: return "fp64";
    case Accumulator::fp32: return "fp32";
    case Accumulator::fp16: return "fp16";
    case Accumulator::bf16: return "bf16";
    case Accumulator::tensor_core: return "tensor_core";
    case Accumulator::bf16_dot2: return "bf16_dot2";
  }
  return "?";
}

namespace {

constexpr AccumulatorPreset kPresets[] = {
    {"fp64", "", accumulators::fp64, "the exact sum (the reference), rounded once into the output"},
    {"fp32", "", accumulators::fp32, "fp32 GEMM (Eigen): sums in float, order unspecified"},
    {"fp16", "", accumulators::fp16, "products summed in order, each addition rounded to nearest-even fp16"},
    {"bf16", "", accumulators::bf16, "products summed in order, each addition rounded to nearest-even bf16"},
    {"bf16_dot2", "vdpbf16ps", accumulators::vdpbf16ps,
     "x86 VDPBF16PS (AVX512-BF16): pairs of bf16 products by two fused multiply-adds into fp32, DAZ/FTZ"},
    {"tensor_core", "", accumulators::tensor_core,
     "NVIDIA Hopper wgmma for the operands: hopper_wgmma_fp8 for 8-bit operands, else hopper_wgmma_bf16"},
    {"hopper_wgmma_fp8", "", accumulators::hopper_wgmma_fp8,
     "NVIDIA Hopper (sm_90a) wgmma, FP8 inputs: blocks of 32 products, 13 fraction bits, E8M13 output "
     "(MMA-Sim 2.1.1)"},
    {"hopper_wgmma_bf16", "hopper_wgmma_fp16", accumulators::hopper_wgmma_bf16,
     "NVIDIA Hopper (sm_90a) wgmma, BF16/FP16 inputs: blocks of 16 products, 25 fraction bits, fp32 output "
     "(MMA-Sim 2.1.1)"},
    {"deepseek_v3_fp8", "", accumulators::deepseek_v3_fp8,
     "Hopper FP8 wgmma chains of 128 products promoted into fp32 (DeepSeek-V3, arXiv 2412.19437, 3.3.2)"},
};

bool has_name(const AccumulatorPreset& p, std::string_view name) {
  if (p.name == name) return true;
  std::string_view rest = p.aliases;
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    if (rest.substr(0, space) == name) return true;
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  }
  return false;
}

bool narrow(const OperandRange& a, const OperandRange& b) { return a.storage_bits <= 8 && b.storage_bits <= 8; }

// A promotion interval holds whole blocks; `whose` names the block's origin.
std::string promotion_problem(int promote_every, int block, const std::string& whose) {
  if (promote_every % block == 0) return "";
  return "promote_every " + std::to_string(promote_every) + " is not a multiple of the " + std::to_string(block) +
         "-product " + whose;
}

}  // namespace

std::span<const AccumulatorPreset> accumulator_presets() { return kPresets; }

const AccumulatorPreset* find_accumulator_preset(std::string_view name) {
  for (const AccumulatorPreset& p : kPresets)
    if (has_name(p, name)) return &p;
  return nullptr;
}

std::string accumulator_label(const AccumulatorModel& m) {
  for (const AccumulatorPreset& p : kPresets)
    if (p.model == m) return std::string(p.name);
  // A preset with a promotion interval of one's own.
  for (const AccumulatorPreset& p : kPresets)
    if (m.promote_every != 0 && p.model == m.promoted_every(0))
      return std::string(p.name) + " promoted every " + std::to_string(m.promote_every);
  std::string s = accumulator_name(m.kind);
  if (m.kind != Accumulator::tensor_core) return s;
  std::string args;
  auto add = [&](const char* name, int v, int unset) {
    if (v == unset) return;
    args += (args.empty() ? "" : ", ") + std::string(name) + "=" + std::to_string(v);
  };
  add("block", m.block, 0);
  add("fraction_bits", m.fraction_bits, 0);
  add("result_bits", m.result_bits, 0);
  add("zero_exponent", m.zero_exponent, kHopperZeroExponent);
  add("promote_every", m.promote_every, 0);
  return s + "(" + args + ")";
}

AccumulatorModel resolve_accumulator(const AccumulatorModel& m, const OperandRange& a, const OperandRange& b) {
  if (m.kind != Accumulator::tensor_core) return m;
  // Hopper wgmma (MMA-Sim 2.1.1): FP8 inputs, blocks of 32 with 13 fraction
  // bits; 16-bit inputs, blocks of 16 with 25. A block's output keeps F + 1
  // bits for FP8 inputs (E8M13) and fp32's 24 otherwise, never more than 24.
  const AccumulatorModel& hopper = narrow(a, b) ? accumulators::hopper_wgmma_fp8 : accumulators::hopper_wgmma_bf16;
  AccumulatorModel r = m;
  if (r.block == 0) r.block = hopper.block;
  if (r.fraction_bits == 0) r.fraction_bits = hopper.fraction_bits;
  if (r.result_bits == 0) r.result_bits = narrow(a, b) ? std::min(r.fraction_bits + 1, 24) : 24;
  return r;
}

std::string accumulator_problem(const AccumulatorModel& m) {
  if (std::string_view(accumulator_name(m.kind)) == "?")
    return "unknown accumulator " + std::to_string(static_cast<int>(m.kind));
  auto outside = [](const char* name, int v, int lo, int hi) -> std::string {
    if (v >= lo && v <= hi) return "";
    return std::string(name) + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]";
  };
  if (m.kind != Accumulator::tensor_core) {
    // A parameter the kind does not read would be ignored: refused.
    const std::pair<const char*, bool> set[] = {{"block", m.block != 0},
                                                {"fraction_bits", m.fraction_bits != 0},
                                                {"result_bits", m.result_bits != 0},
                                                {"zero_exponent", m.zero_exponent != kHopperZeroExponent},
                                                {"promote_every", m.promote_every != 0}};
    for (const auto& [name, is_set] : set)
      if (is_set)
        return std::string("'") + name + "' applies to the tensor_core accumulator only, not " +
               accumulator_name(m.kind);
    return "";
  }
  // 0 takes Hopper's value (resolve_accumulator). The bounds: a block's exact
  // sum and its truncation are carried in 64-bit integers and doubles.
  for (const std::string& e : {outside("block", m.block, 0, 4096), outside("fraction_bits", m.fraction_bits, 0, 48),
                               outside("result_bits", m.result_bits, 0, 24),
                               // Below every nonzero term's exponent (C's is at least -126).
                               outside("zero_exponent", m.zero_exponent, -149, -127),
                               outside("promote_every", m.promote_every, 0, 1 << 30)})
    if (!e.empty()) return e;
  return m.block > 0 ? promotion_problem(m.promote_every, m.block, "block") : "";
}

std::string accumulator_problem(const AccumulatorModel& model, const OperandRange& a, const OperandRange& b,
                                int output_precision, Round round) {
  if (std::string e = accumulator_problem(model); !e.empty()) return e;
  const AccumulatorModel m = resolve_accumulator(model, a, b);
  if (m.kind == Accumulator::tensor_core)
    if (std::string e = promotion_problem(m.promote_every, m.block,
                                          std::string("tensor-core block of ") +
                                              (narrow(a, b) ? "8-bit" : "16-bit or wider") + " operands");
        !e.empty())
      return e;
  if (m.kind == Accumulator::bf16_dot2 && !(a.bf16_exact && b.bf16_exact))
    return "the bf16_dot2 accumulator takes operands exact in bf16: bf16 or a plain (unscaled) format of 8 bits "
           "or fewer";
  // The fp64 sum is kept to 53 bits (rounded to odd): stochastic rounding
  // needs 32 bits below the output's last, so outputs of at most 21 bits.
  if (m.kind == Accumulator::fp64 && round == Round::stochastic && output_precision > 53 - 32)
    return "stochastic rounding of the fp64 sum into a " + std::to_string(output_precision) +
           "-bit output needs more than the 53 bits it keeps; use an output of at most 21 significant bits";
  return "";
}

}  // namespace lplab::kernels
