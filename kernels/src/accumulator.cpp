// The accumulation presets and the one check of a model
// (lplab/kernels/accumulator.h).
#include "lplab/kernels/accumulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/kernels/mma.h"

namespace lplab::kernels {

namespace {

constexpr AccumulatorPreset kPresets[] = {
#define LPLAB_ACCUMULATOR_ROW(name, aliases, model, description) {#name, aliases, accumulators::name, description},
    LPLAB_ACCUMULATOR_PRESETS(LPLAB_ACCUMULATOR_ROW)
#undef LPLAB_ACCUMULATOR_ROW
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

constexpr AccumulatorField kTensorCoreFields[] = {
    {"block", &AccumulatorModel::block, 0, 0, 4096},
    {"fraction_bits", &AccumulatorModel::fraction_bits, 0, 0, 48},
    {"result_bits", &AccumulatorModel::result_bits, 0, 0, 24},
    {"zero_exponent", &AccumulatorModel::zero_exponent, kHopperZeroExponent, -149, -127},
    {"promote_every", &AccumulatorModel::promote_every, 0, 0, 1 << 30},
};

bool narrow(const OperandRange& a, const OperandRange& b) { return a.storage_bits <= 8 && b.storage_bits <= 8; }

// A promotion interval holds whole blocks; `whose` names the block's origin.
AccumulatorProblem promotion_problem(int promote_every, int block, const std::string& whose) {
  if (promote_every % block == 0) return {};
  return {"promote_every " + std::to_string(promote_every) + " is not a multiple of the " + std::to_string(block) +
              "-product " + whose,
          &AccumulatorModel::promote_every};
}

}  // namespace

std::span<const AccumulatorPreset> plain_accumulator_presets() { return kPresets; }

std::span<const AccumulatorPreset> accumulator_presets() {
  static const std::vector<AccumulatorPreset> all = [] {
    std::vector<AccumulatorPreset> v(std::begin(kPresets), std::end(kPresets));
    const auto instructions = mma_instructions();
    for (std::size_t i = 0; i < instructions.size(); ++i) {
      AccumulatorModel m(Accumulator::instruction);
      m.instruction = static_cast<int>(i);
      v.push_back({instructions[i].name, "", m, instructions[i].isa});
    }
    return v;
  }();
  return all;
}

const AccumulatorPreset* find_accumulator_preset(std::string_view name) {
  for (const AccumulatorPreset& p : accumulator_presets())
    if (has_name(p, name)) return &p;
  return nullptr;
}

AccumulatorModel instruction_accumulator(std::string_view instruction_name) {
  const AccumulatorPreset* p = find_accumulator_preset(instruction_name);
  if (p == nullptr || p->model.kind != Accumulator::instruction)
    throw std::invalid_argument("instruction_accumulator: no matrix-unit instruction '" + std::string(instruction_name) +
                                "'");
  return p->model;
}

std::span<const AccumulatorField> accumulator_fields() { return kTensorCoreFields; }

std::string accumulator_label(const AccumulatorModel& m) {
  for (const AccumulatorPreset& p : accumulator_presets())
    if (p.model == m) return std::string(p.name);
  // A preset with a promotion interval of one's own.
  for (const AccumulatorPreset& p : accumulator_presets())
    if (m.promote_every != 0 && p.model == m.promoted_every(0))
      return std::string(p.name) + " promoted every " + std::to_string(m.promote_every);
  std::string s = accumulator_name(m.kind);
  if (m.kind != Accumulator::tensor_core) return s;
  std::string args;
  for (const AccumulatorField& f : kTensorCoreFields)
    if (m.*f.field != f.unset)
      args += (args.empty() ? "" : ", ") + std::string(f.name) + "=" + std::to_string(m.*f.field);
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

AccumulatorProblem accumulator_problem(const AccumulatorModel& m) {
  if (std::string_view(accumulator_name(m.kind)) == "?")
    return {"unknown accumulator " + std::to_string(static_cast<int>(m.kind))};
  if (m.kind == Accumulator::instruction) {
    const auto instructions = mma_instructions();
    if (m.instruction < 0 || static_cast<std::size_t>(m.instruction) >= instructions.size())
      return {"no matrix-unit instruction " + std::to_string(m.instruction)};
  } else if (m.instruction != -1) {
    return {"an instruction index applies to the instruction accumulator only, not " +
            std::string(accumulator_name(m.kind))};
  }
  for (const AccumulatorField& f : kTensorCoreFields) {
    const int v = m.*f.field;
    // A parameter the kind does not read would be ignored: refused (an
    // instruction takes a promotion interval).
    const bool reads = m.kind == Accumulator::tensor_core ||
                       (m.kind == Accumulator::instruction && f.field == &AccumulatorModel::promote_every);
    if (!reads && v != f.unset)
      return {"'" + std::string(f.name) + "' applies to the tensor_core accumulator only, not " +
                  accumulator_name(m.kind),
              f.field};
    if (v < f.lo || v > f.hi)
      return {std::string(f.name) + " " + std::to_string(v) + " is outside [" + std::to_string(f.lo) + ", " +
                  std::to_string(f.hi) + "]",
              f.field};
  }
  if (m.kind == Accumulator::instruction) {
    const MmaInstruction& i = mma_instructions()[static_cast<std::size_t>(m.instruction)];
    return promotion_problem(m.promote_every, i.k, i.name + " instruction");
  }
  return m.block > 0 ? promotion_problem(m.promote_every, m.block, "block") : AccumulatorProblem{};
}

AccumulatorProblem accumulator_problem(const AccumulatorModel& model, const OperandRange& a, const OperandRange& b,
                                       int output_precision, Round round) {
  if (AccumulatorProblem e = accumulator_problem(model)) return e;
  const AccumulatorModel m = resolve_accumulator(model, a, b);
  if (m.kind == Accumulator::tensor_core)
    if (AccumulatorProblem e = promotion_problem(m.promote_every, m.block,
                                                 std::string("tensor-core block of ") +
                                                     (narrow(a, b) ? "8-bit" : "16-bit or wider") + " operands"))
      return e;
  if (m.kind == Accumulator::bf16_dot2 && !(a.bf16_exact && b.bf16_exact))
    return {"the bf16_dot2 accumulator takes operands exact in bf16: bf16 or a plain (unscaled) format of 8 bits "
            "or fewer"};
  // The fp64 sum is kept to 53 bits (rounded to odd): stochastic rounding
  // needs 32 bits below the output's last, so outputs of at most 21 bits.
  if (m.kind == Accumulator::fp64 && round == Round::stochastic && output_precision > 53 - 32)
    return {"stochastic rounding of the fp64 sum into a " + std::to_string(output_precision) +
            "-bit output needs more than the 53 bits it keeps; use an output of at most 21 significant bits"};
  return {};
}

}  // namespace lplab::kernels
