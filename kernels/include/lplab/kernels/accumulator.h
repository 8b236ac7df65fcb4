// How a matrix unit sums a dot product, as a value: lplab::kernels::matmul
// takes an AccumulatorModel (MatmulOptions::accumulator), and every layer
// that names one -- C++, the tool's specs and experiments -- picks a preset
// from one table (accumulator_presets()) and checks it with one function
// (accumulator_problem()).
//
//   using namespace lplab::kernels;
//   matmul(m, n, k, a, b, c, {.accumulator = accumulators::hopper_wgmma_fp8});
//   matmul(m, n, k, a, b, c, {.accumulator = accumulators::hopper_wgmma_fp8.promoted_every(128)});
//   const AccumulatorPreset* p = find_accumulator_preset("deepseek_v3_fp8");
//
// The tensor-core model (Accumulator::tensor_core) is the one of MMA-Sim
// (arXiv 2511.10909) for Hopper's wgmma; docs/tensor-core-model.md states it
// and where each parameter comes from.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"

namespace lplab::kernels {

// The algorithm that sums the products, X(name, one line), in detail:
//   fp64: the reference. Where every product is an integer multiple of a
//     common quantum and the sum fits 126 bits (operands of at most 16 bits
//     with subnormals: fp16 and every format of 8 bits or fewer except E8M0;
//     fp16 x fp16 for k < 2^46), the sum is exact: integers in 128-bit
//     arithmetic. Otherwise (float, bf16 or E8M0 operands) products are exact
//     in double and summed in double in order k = 0, 1, ..., so that |error|
//     <= gamma_k * sum |a_i b_i| with u = 2^-53. The output is rounded once
//     (the exact sum is first rounded to odd at 53 bits, which makes the
//     later rounding to any format of at most 51 bits correct).
//   fp32: the fast path: the operands decoded to float and Eigen's fp32
//     GEMM. Summation order unspecified; |error| <= gamma_k * sum |a_i b_i|
//     with u = 2^-24 while products and sums stay inside float's range
//     (products of operands with at most 12 significant bits are exact in
//     float unless they overflow or underflow it, as bf16 and E8M0 products
//     can).
//   fp16, bf16: each product exact, each addition rounded to nearest-even
//     into the accumulator format, in order k = 0, 1, ..., k-1, starting from
//     +0: the result is bit-reproducible. Overflow gives infinity, as in IEEE.
//   tensor_core: a tensor core's fixed-point blocks: AccumulatorModel's
//     block, fraction_bits, result_bits, zero_exponent and promote_every
//     (docs/tensor-core-model.md).
//   bf16_dot2: x86's VDPBF16PS (AVX512-BF16) numerics, in a GEMM's order
//     (Intel SDM, VDPBF16PS): k is taken in pairs (2p, 2p + 1), padded with
//     +0 products for an odd k; each pair goes into an fp32 accumulator (from
//     +0) by two fused multiply-adds, the odd element first, each rounded to
//     nearest-even, with denormal inputs read as zero and denormal results
//     flushed to zero. The operands must be exact in bf16 (bf16 and every
//     format of 8 bits or fewer). Where the CPU has AVX512-BF16 the
//     instruction itself runs; else a scalar emulation -- a test checks the
//     two agree bit for bit.
//   instruction: a matrix-unit instruction (mma.h) chained over k as a
//     kernel's k loop chains it: D of one instruction is C of the next, from
//     C = +0, k padded with zero products to a whole instruction;
//     AccumulatorModel::instruction names it (an index of
//     mma_instructions()), promote_every as for tensor_core. Every operand
//     value must be exact in the instruction's operand type; a block-scaled
//     instruction takes block-scaled operands (matmul.h), whose scales it
//     applies inside the dot product.
#define LPLAB_ACCUMULATORS(X)                                                                      \
  X(fp64, "the exact sum (exact in 128-bit integers where it fits, else double), rounded once")   \
  X(fp32, "the operands decoded to float and Eigen's fp32 GEMM, order unspecified")               \
  X(fp16, "products summed in order, each addition rounded to nearest-even fp16")                 \
  X(bf16, "products summed in order, each addition rounded to nearest-even bf16")                 \
  X(tensor_core, "a tensor core's fixed-point blocks (AccumulatorModel's parameters)")            \
  X(bf16_dot2, "x86 VDPBF16PS: pairs of bf16 products by two fused multiply-adds into fp32")      \
  X(instruction, "a matrix-unit instruction (mma.h) chained over k")
enum class Accumulator { LPLAB_ACCUMULATORS(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(Accumulator, "accumulator", LPLAB_ACCUMULATORS)

// "fp64", "fp32", "fp16", "bf16", "tensor_core", "bf16_dot2", "instruction"; "?" for a
// value outside the enum.
constexpr const char* accumulator_name(Accumulator a) { return enum_name(a); }

// An alignment exponent below every nonzero term's: MMA-Sim 2.1.1 counts a
// zero product, and C = +0, at -133 for sm_90 with fp32 output.
inline constexpr int kHopperZeroExponent = -133;

// One accumulation model. For Accumulator::tensor_core, one block sums
// `block` products and the block's input C (the previous block's output, +0
// for the first):
//   1. every term's alignment exponent: e(a) + e(b) for a product (operand
//      exponents, subnormals at their format's smallest normal exponent),
//      e(C) >= -126 for C, `zero_exponent` for a zero; E is the largest;
//   2. every term truncated toward zero to a multiple of 2^(E - fraction_bits);
//   3. their exact sum,
//   4. normalised and truncated toward zero to `result_bits` significant bits
//      (exponent clamped at fp32's -126; 2^128 or more is infinite);
// with promote_every = N > 0, every N products the chain's output is added
// into an fp32 register with round-to-nearest-even and the chain restarts.
// A tensor-core field left 0 takes Hopper wgmma's value for the operands
// (resolve_accumulator): 32 / 13 / 14 for operands of 8 bits or fewer,
// 16 / 25 / 24 otherwise. The other kinds take no parameter.
struct AccumulatorModel {
  Accumulator kind = Accumulator::fp32;
  int block = 0;          // products per block (L)
  int fraction_bits = 0;  // bits kept below the block's largest alignment exponent (F)
  int result_bits = 0;    // significant bits of a block's output (R, at most fp32's 24)
  int zero_exponent = kHopperZeroExponent;  // a zero term's alignment exponent (-149 to -127: below C's)
  int promote_every = 0;  // products per promotion into fp32 (0: never; a multiple of the block)
  int instruction = -1;   // Accumulator::instruction: the index of its mma_instructions() row

  constexpr AccumulatorModel() = default;
  // An accumulator with no parameters (tensor_core: Hopper's for the operands).
  constexpr AccumulatorModel(Accumulator k) : kind(k) {}  // NOLINT: implicit, as MatmulOptions took the enum
  constexpr AccumulatorModel(Accumulator k, int l, int f, int r, int promote = 0)
      : kind(k), block(l), fraction_bits(f), result_bits(r), promote_every(promote) {}

  // This model with its chain promoted every n products (DeepSeek-V3 3.3.2).
  constexpr AccumulatorModel promoted_every(int n) const {
    AccumulatorModel m = *this;
    m.promote_every = n;
    return m;
  }
  friend constexpr bool operator==(const AccumulatorModel&, const AccumulatorModel&) = default;
};

// The presets: plain accumulators, and matrix units as MMA-Sim 2.1.1 models
// them (parameters in docs/tensor-core-model.md). accumulator_presets() lists
// these, then one preset per matrix-unit instruction (mma.h: the model
// {Accumulator::instruction, index}, named as the instruction,
// "hopper.wgmma.f32.e4m3.e4m3"). One line each, in the order
// listings show them: X(name, other names (space-separated), model,
// description). A preset is a constant kernels::accumulators::<name> in C++,
// a name in specs and experiments, a row of accumulator_presets() and the
// label accumulator_label() gives the model. A model may use the presets
// above it.
#define LPLAB_ACCUMULATOR_PRESETS(X)                                                                    \
  X(fp64, "", AccumulatorModel(Accumulator::fp64),                                                      \
    "the exact sum (the reference), rounded once into the output")                                     \
  X(fp32, "", AccumulatorModel(Accumulator::fp32), "fp32 GEMM (Eigen): sums in float, order unspecified") \
  X(fp16, "", AccumulatorModel(Accumulator::fp16),                                                      \
    "products summed in order, each addition rounded to nearest-even fp16")                            \
  X(bf16, "", AccumulatorModel(Accumulator::bf16),                                                      \
    "products summed in order, each addition rounded to nearest-even bf16")                            \
  X(bf16_dot2, "vdpbf16ps", AccumulatorModel(Accumulator::bf16_dot2),                                   \
    "x86 VDPBF16PS (AVX512-BF16): pairs of bf16 products by two fused multiply-adds into fp32, DAZ/FTZ") \
  /* Hopper wgmma with parameters by operand width (the two below). */                                  \
  X(tensor_core, "", AccumulatorModel(Accumulator::tensor_core),                                        \
    "NVIDIA Hopper wgmma for the operands: hopper_wgmma_fp8 for 8-bit operands, else hopper_wgmma_bf16") \
  /* E4M3/E5M2 inputs: 32 products per block, 13 fraction bits, E8M13 output. */                       \
  X(hopper_wgmma_fp8, "", AccumulatorModel(Accumulator::tensor_core, 32, 13, 14),                       \
    "NVIDIA Hopper (sm_90a) wgmma, FP8 inputs: blocks of 32 products, 13 fraction bits, E8M13 output "  \
    "(MMA-Sim 2.1.1)")                                                                                  \
  /* BF16/FP16 inputs: 16 products, 25 fraction bits, fp32 output. */                                  \
  X(hopper_wgmma_bf16, "hopper_wgmma_fp16", AccumulatorModel(Accumulator::tensor_core, 16, 25, 24),     \
    "NVIDIA Hopper (sm_90a) wgmma, BF16/FP16 inputs: blocks of 16 products, 25 fraction bits, fp32 "    \
    "output (MMA-Sim 2.1.1)")                                                                           \
  /* arXiv 2412.19437, 3.3.2: chains of N_C = 128 products promoted into fp32 on the CUDA cores. */     \
  X(deepseek_v3_fp8, "", hopper_wgmma_fp8.promoted_every(128),                                          \
    "Hopper FP8 wgmma chains of 128 products promoted into fp32 (DeepSeek-V3, arXiv 2412.19437, 3.3.2)")

namespace accumulators {
#define LPLAB_ACCUMULATOR_CONSTANT(name, aliases, model, description) inline constexpr AccumulatorModel name = model;
LPLAB_ACCUMULATOR_PRESETS(LPLAB_ACCUMULATOR_CONSTANT)
#undef LPLAB_ACCUMULATOR_CONSTANT
// The C++ name of bf16_dot2 by its instruction.
inline constexpr AccumulatorModel vdpbf16ps = bf16_dot2;
}  // namespace accumulators

struct AccumulatorPreset {
  std::string_view name;
  std::string_view aliases;  // other names, space-separated
  AccumulatorModel model;
  std::string_view description;
};

// Every preset, in the order listings show them: LPLAB_ACCUMULATOR_PRESETS'
// rows, then the matrix-unit instructions'.
std::span<const AccumulatorPreset> accumulator_presets();
// LPLAB_ACCUMULATOR_PRESETS' rows alone (the plain accumulators and Hopper's
// tensor-core presets): what a listing names before "or an instruction".
std::span<const AccumulatorPreset> plain_accumulator_presets();
// The instruction preset's model: {Accumulator::instruction, index}.
AccumulatorModel instruction_accumulator(std::string_view instruction_name);
// By name or alias; nullptr if none.
const AccumulatorPreset* find_accumulator_preset(std::string_view name);
// The preset's name where `m` is exactly one ("deepseek_v3_fp8"), or one
// with its own promotion interval ("hopper_wgmma_bf16 promoted every 48"),
// else the kind with its parameters ("tensor_core(block=32, fraction_bits=12,
// result_bits=13)").
std::string accumulator_label(const AccumulatorModel& m);

// What the accumulators need to know of an operand type: every finite value
// is q * 2^quantum_exp with |q| < 2^magnitude_bits where `fixed`; false
// where that takes too many bits to be useful (float, bf16, E8M0).
struct OperandRange {
  bool fixed = false;
  int quantum_exp = 0;
  int magnitude_bits = 0;
  int storage_bits = 32;    // the format's width (Hopper's block depends on it)
  int emin = -126;          // the exponent of the smallest normal value
  bool bf16_exact = false;  // every value is a bf16 value (Accumulator::bf16_dot2)
};

// The range of a format with numpy's finfo fields (2^minexp is the smallest
// normal value, max < 2^maxexp): every format's, compiled or declared at run
// time, by the same arithmetic.
constexpr OperandRange operand_range(int storage_bits, int nmant, int minexp, int maxexp, bool has_subnormals) {
  const int quantum = has_subnormals ? minexp - nmant : minexp;
  const int bits = maxexp - quantum;
  // bf16: 8 significant bits, exponents -133 (its smallest subnormal) to 127.
  const bool in_bf16 = nmant <= 7 && maxexp <= 128 && quantum >= -133;
  return {bits <= 48, quantum, bits, storage_bits, minexp, in_bf16};
}

template <class T>
constexpr OperandRange operand_range() {
  if constexpr (std::is_same_v<T, float>) {
    return {};
  } else {
    using F = finfo<T>;
    return operand_range(F::bits, F::nmant, F::minexp, F::maxexp, F::has_subnormals);
  }
}

// Significant bits of an output type.
template <class T>
constexpr int output_precision() {
  if constexpr (std::is_same_v<T, float>) return 24;
  else return finfo<T>::nmant + 1;
}

// `m` with every tensor-core field left 0 filled in for operands a and b.
AccumulatorModel resolve_accumulator(const AccumulatorModel& m, const OperandRange& a, const OperandRange& b);

// The tensor-core model's parameters, in the order labels show them: the name
// labels, problems and spec files use, the field, the value that means "not
// set" (0 takes Hopper's value, resolve_accumulator) and the bounds
// accumulator_problem holds a model to. A block's exact sum and its
// truncation are carried in 64-bit integers and doubles; a zero term lies
// below every nonzero term's exponent (C's is at least -126). The one list of
// them: accumulator_label, accumulator_problem and the spec reader
// (experiments) all read it.
struct AccumulatorField {
  std::string_view name;
  int AccumulatorModel::*field;
  int unset, lo, hi;
};
std::span<const AccumulatorField> accumulator_fields();

// Why a model cannot run: a message (empty if it can), and the parameter at
// fault where one is -- so that a spec points at the key that set it.
struct AccumulatorProblem {
  std::string message;
  int AccumulatorModel::*field = nullptr;
  explicit operator bool() const { return !message.empty(); }
};

// Why `m` cannot sum products of a and b into an output of
// `output_precision` significant bits rounded by `round`. The one check of a
// model: matmul() calls it (and throws std::invalid_argument with its
// message), and so does every layer that takes a model from a user before
// any work.
AccumulatorProblem accumulator_problem(const AccumulatorModel& m, const OperandRange& a, const OperandRange& b,
                                       int output_precision, Round round);
// The checks that need no operand (a model's own parameters).
AccumulatorProblem accumulator_problem(const AccumulatorModel& m);

}  // namespace lplab::kernels
