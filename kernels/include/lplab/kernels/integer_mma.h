// Integer matrix units, as data: NVIDIA's mma.sync with .s32 accumulation on
// s8/u8 and s4/u4 operands (Turing on), Hopper's wgmma and Blackwell's
// tcgen05.mma kind::i8, dp4a, and AMD's v_mfma_i32_*_i8 (CDNA1-3); one
// preset per instruction, named as the floating-point presets are (mma.h):
//
//   <arch>.mma.<shape>[.satfinite].s32.<a>.<b>.s32     ampere.mma.m16n8k32.satfinite.s32.s8.u8.s32
//   hopper.wgmma[.satfinite].s32.<a>.<b>                 hopper.wgmma.s32.u8.s8
//   blackwell.tcgen05.i8[.saturate].s32.<a>.<b>
//   nvidia.dp4a.<a>.<b>                                   nvidia.dp4a.s8.u8
//   <cdna>.mfma.<AMD suffix>                              cdna3.mfma.i32_16x16x32_i8
//
// Integer products and sums are exact, so an instruction is one function:
//     D = wrap(C + sum_{i<k} a_i b_i)        (two's complement, mod 2^32)
//     D = clamp(C + sum_{i<k} a_i b_i, INT32_MIN, INT32_MAX)     (.satfinite)
// PTX ISA 9.1 ("mma", integer operation): "The .satfinite qualifier
// indicates that on overflow, the accumulated value is limited to the range
// MIN_INT32..MAX_INT32 ... If .satfinite is not specified, the accumulated
// value is wrapped instead"; wgmma says the same; tcgen05.mma kind::i8
// saturates by bit 3 of its instruction descriptor. Wrapping does not depend
// on the order of the additions. Saturation could: the model clamps the
// exact sum of one instruction once (PTX does not say whether a partial sum
// is clamped; the two differ only where C lies near a bound and the products
// have both signs -- the case the tests build, for a GPU probe to decide).
// D of one instruction is C of the next along K (a kernel's k loop), so a
// saturating chain clamps once per instruction. dp4a: d = c + the four byte
// products, wrapped (PTX: a 32-bit d, no .sat). AMD's MFMA has no clamp
// control; its i32 accumulation is taken to wrap (not documented by AMD).
// docs/integer-scaling.md, "Integer matrix units", has the sources.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lplab::kernels {

struct IntegerMmaInstruction {
  std::string name;       // the preset's name (above)
  std::string_view arch;  // "Ampere (sm_80)"
  std::string isa;        // the instruction as its ISA spells it
  int m = 0, n = 0, k = 0;
  int blocks = 1;         // AMD's multi-block instructions: independent blocks of m x n x k
  std::string_view a, b;  // the operands' catalog formats: int8, uint8, int4, uint4
  bool saturate = false;  // .satfinite: clamp to int32, else wrap
  // The operand range of a, b (from the catalog formats).
  int a_min = 0, a_max = 0, b_min = 0, b_max = 0;
};

// Every preset, NVIDIA by generation then AMD by CDNA generation.
std::span<const IntegerMmaInstruction> integer_mma_instructions();
const IntegerMmaInstruction* find_integer_mma_instruction(std::string_view name);

// One instruction's D for k products, exactly as above (portable: no state).
constexpr std::int32_t integer_mma_step(bool saturate, const std::int32_t* a, const std::int32_t* b, int k,
                                        std::int32_t c) noexcept {
  std::int64_t sum = c;
  for (int i = 0; i < k; ++i) sum += static_cast<std::int64_t>(a[i]) * b[i];
  if (saturate) {
    if (sum > INT32_MAX) return INT32_MAX;
    if (sum < INT32_MIN) return INT32_MIN;
    return static_cast<std::int32_t>(sum);
  }
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum)));
}

// D after chaining instructions over K = a.size() products (zero-padded to
// a multiple of k), D of one the C of the next. std::invalid_argument for
// a value outside the operand types' ranges or spans of different lengths.
std::int32_t integer_mma_chain(const IntegerMmaInstruction& i, std::span<const std::int32_t> a,
                               std::span<const std::int32_t> b, std::int32_t c);

// D = A B + C through the instruction, one chain per output: A m x k and B
// n x k (B transposed: row j is column j of B), both row-major; C m x n or
// empty (zeros); D m x n.
void integer_matmul(const IntegerMmaInstruction& i, std::size_t m, std::size_t n, std::size_t k,
                    std::span<const std::int32_t> a, std::span<const std::int32_t> b_t,
                    std::span<const std::int32_t> c, std::span<std::int32_t> d);

}  // namespace lplab::kernels
