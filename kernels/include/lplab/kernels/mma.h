// Every matrix-unit instruction MMA-Sim 2.1.1 models (Xie, Wang, Yang & Yang,
// arXiv 2511.10909), as data: one preset per instruction, named
//
//   <arch>.mma.<PTX shape and types>     volta.mma.m8n8k4.f32.f16.f16.f32
//                                        rtx_blackwell.mma.m16n8k32.f8f6f4.f32.e2m1.e4m3.f32
//                                        rtx_blackwell.mma.m16n8k64.mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3
//   <arch>.wgmma.<d>.<a>.<b>             hopper.wgmma.f32.e4m3.e4m3
//   <arch>.tcgen05.<kind>.<d>.<a>.<b>    blackwell.tcgen05.f8f6f4.f32.e3m2.e2m1
//   <arch>.tcgen05.<kind>.<block>.<d>.<a>.<b>.<scale>
//                                        blackwell.tcgen05.mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0
//   <arch>.mfma.<AMD suffix>             cdna3.mfma.f32_32x32x8_bf16
//
// with <arch> one of volta, turing, ampere, ada, hopper, blackwell,
// rtx_blackwell (NVIDIA), cdna1, cdna2, cdna3 (AMD). wgmma and tcgen05 take
// n (and tcgen05 m) from a range that does not change the numbers, so their
// names leave the shape out. docs/matrix-units.md has the table of every
// family's parameters and where they come from; `lplab mma --list` prints
// every preset.
//
//   const MmaInstruction* i = find_mma_instruction("hopper.wgmma.f32.e4m3.e4m3");
//   double d = mma_chain(*i, a, b, c);   // a, b: k values each (a multiple of i->k)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/formats/enum_table.h"
#include "lplab/kernels/mma_step.h"

namespace lplab::kernels {

// The operand types the instructions take, by their ISA names: PTX's (f64,
// f32, tf32, f16, bf16, e4m3, e5m2, e3m2, e2m3, e2m1, ue8m0, ue4m3) and AMD's
// fp8/bf8 (E4M3FNUZ/E5M2FNUZ), declared once with their names
// (enum_table.h): X(ISA name, what it is).
#define LPLAB_MMA_TYPES(X)                                                 \
  X(none, "no type")                                                       \
  X(f64, "IEEE binary64")                                                  \
  X(f32, "IEEE binary32")                                                  \
  X(tf32, "TensorFloat-32: an fp32 code whose top 19 bits the unit reads") \
  X(f16, "IEEE binary16")                                                  \
  X(bf16, "bfloat16")                                                      \
  X(e4m3, "OFP8 E4M3")                                                     \
  X(e5m2, "OFP8 E5M2")                                                     \
  X(e3m2, "OCP MX FP6 E3M2")                                               \
  X(e2m3, "OCP MX FP6 E2M3")                                               \
  X(e2m1, "OCP MX FP4 E2M1")                                               \
  X(fp8, "AMD fp8: E4M3FNUZ")                                              \
  X(bf8, "AMD bf8: E5M2FNUZ")                                              \
  X(ue8m0, "OCP MX E8M0, the block scale")                                 \
  X(ue4m3, "E4M3 as an unsigned block scale (NVFP4): the sign bit ignored")
enum class MmaType : std::uint8_t { LPLAB_MMA_TYPES(LPLAB_ENUMERATOR) };
LPLAB_ENUM_TABLE(MmaType, "matrix-unit type", LPLAB_MMA_TYPES)

// A type's constants, from the finfo of its lplab format (mma_format_name;
// f32 and tf32: float32's, f64: double's).
struct MmaTypeInfo {
  std::string_view name;    // the ISA's spelling
  int bytes;                // a code's width in a golden file or a buffer (fp6/fp4: one per byte)
  int bits;                 // the code's significant bits
  int emin;                 // the smallest normal exponent (a subnormal's alignment exponent)
};
const MmaTypeInfo& mma_type_info(MmaType t);
// The catalog name of the lplab format whose codes and values a narrow type's
// are ("float8_e4m3fnuz" for AMD's fp8; ue4m3: "float8_e4m3fn", whose sign
// bit the unit ignores); empty for f64, f32 and tf32, which are not formats
// here.
std::string_view mma_format_name(MmaType t);
// By ISA name; MmaType::none if unknown.
MmaType mma_type(std::string_view name);

// A code's value, exactly (tf32: the fp32 code's top 19 bits, as the unit
// reads it; ue4m3: the sign bit ignored, as the unit does).
double mma_decode(MmaType t, std::uint64_t code);
// The code of `value` in type t, if t holds it exactly (NaN: t's NaN, if
// it has one; tf32: an fp32 code whose low 13 bits are zero; ue4m3: not
// below zero); mma_holds says whether it does (a matmul operand must).
std::optional<std::uint64_t> mma_code(MmaType t, double value);
bool mma_holds(MmaType t, double value);
// The index of the first of x that t does not hold (mma_holds), x.size() if
// it holds every one: in bulk, through the SIMD conversions.
std::size_t mma_first_not_held(MmaType t, std::span<const float> x);
// D's code for a value the model gave: NaN as the canonical 0x7FFFFFFF /
// 0x7FFF where the model defines it (every algorithm but fma and ftz_pairs,
// whose NaN follows the IEEE operations).
std::uint64_t mma_encode(MmaType t, double value);

struct MmaInstruction {
  std::string name;       // the preset's name (above)
  std::string_view arch;  // "Hopper (sm_90a)"
  std::string isa;        // the instruction as its ISA spells it (n of wgmma/tcgen05 as "N")
  int m = 0, n = 0, k = 0;
  MmaType a = MmaType::none, b = MmaType::none, c = MmaType::none, d = MmaType::none;
  MmaType scale = MmaType::none;  // block-scaled instructions: ue8m0 or ue4m3
  MmaModel model;
};

// Every preset, in the order --list shows them: NVIDIA by generation (mma,
// mma.block_scale, wgmma, tcgen05.mma, tcgen05.mma.block_scale), then AMD's
// mfma by CDNA generation.
std::span<const MmaInstruction> mma_instructions();
const MmaInstruction* find_mma_instruction(std::string_view name);
// The presets whose names are nearest `name` (edit distance), nearest first.
std::vector<std::string_view> closest_mma_instructions(std::string_view name, std::size_t count = 3);

// D after chaining instructions over K = a.size() (a multiple of k) products,
// D of one the C of the next: a[t], b[t] the operands' values (mma_decode),
// c the first C (a value of the instruction's C type), sa and sb the block
// scales' values (K / scale_block each) for a block-scaled instruction.
// `steps` (optional) receives every fused step of the chain, however many,
// numbered across it (none for the fma and ftz_pairs models).
double mma_chain(const MmaInstruction& i, std::span<const double> a, std::span<const double> b, double c,
                 std::span<const double> sa = {}, std::span<const double> sb = {},
                 std::vector<MmaStepTrace>* steps = nullptr);

// "algorithm, L = 16, F = 25, e_zero = -133, RZ fp32" -- one line for listings.
std::string mma_parameters(const MmaInstruction& i);
const char* mma_algorithm_name(MmaAlgorithm a);
const char* mma_rounding_name(MmaRounding r);

}  // namespace lplab::kernels

