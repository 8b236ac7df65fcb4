// The integer matrix-unit presets (integer_mma.h) from parameter tables: per
// NVIDIA generation the mma.sync shapes (PTX ISA 9.1, "mma": m8n8k16 and
// m8n8k32 on sm_75, the m16n8 shapes on sm_80), every signedness of A and B,
// with and without .satfinite; Hopper's wgmma and Blackwell's tcgen05
// kind::i8 (k = 32); dp4a; AMD's i8 MFMA per CDNA generation (LLVM's AMDGPU
// assembler tests: the k = 8 and 16 single-block forms are gone from gfx940,
// replaced by k = 16 and 32). docs/integer-scaling.md cites each source.
#include "lplab/kernels/integer_mma.h"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "lplab/formats.h"
#include "lplab/kernels/recipes.h"

namespace lplab::kernels {
namespace {

// PTX's operand types and their catalog formats.
struct IntType {
  std::string_view ptx, format;
  int min, max;
};
constexpr std::array<IntType, 4> kTypes{{
    {"s8", "int8", static_cast<int>(finfo<int8>::min), static_cast<int>(finfo<int8>::max)},
    {"u8", "uint8", static_cast<int>(finfo<uint8>::min), static_cast<int>(finfo<uint8>::max)},
    {"s4", "int4", static_cast<int>(finfo<int4>::min), static_cast<int>(finfo<int4>::max)},
    {"u4", "uint4", static_cast<int>(finfo<uint4>::min), static_cast<int>(finfo<uint4>::max)},
}};
const IntType& type_named(std::string_view ptx) {
  for (const IntType& t : kTypes)
    if (t.ptx == ptx) return t;
  throw std::logic_error("integer_mma.cpp: unknown type " + std::string(ptx));
}

// mma.sync integer shapes: the shape, k and the operands' width.
struct Shape {
  std::string_view shape;
  int m, n, k, bits;
};
constexpr Shape kSm75[] = {{"m8n8k16", 8, 8, 16, 8}, {"m8n8k32", 8, 8, 32, 4}};
constexpr Shape kSm80[] = {{"m8n8k16", 8, 8, 16, 8},   {"m16n8k16", 16, 8, 16, 8}, {"m16n8k32", 16, 8, 32, 8},
                           {"m8n8k32", 8, 8, 32, 4},   {"m16n8k32", 16, 8, 32, 4}, {"m16n8k64", 16, 8, 64, 4}};
// The generations and their list (sm_90 and later still accept the s4/u4
// shapes; Hopper and Blackwell run them as emulation sequences, NVIDIA's
// forum answer on int4 -- the same numbers).
struct Generation {
  std::string_view id;
  std::span<const Shape> shapes;
};
constexpr std::array<Generation, 6> kNv{{{"turing", kSm75},
                                          {"ampere", kSm80},
                                          {"ada", kSm80},
                                          {"hopper", kSm80},
                                          {"blackwell", kSm80},
                                          {"rtx_blackwell", kSm80}}};

// AMD's i8 MFMA: suffix, M, N, K per block, blocks.
struct Mfma {
  std::string_view suffix;
  int m, n, k, blocks;
};
constexpr Mfma kCdna12[] = {{"i32_32x32x4i8", 32, 32, 4, 2},
                            {"i32_16x16x4i8", 16, 16, 4, 4},
                            {"i32_4x4x4i8", 4, 4, 4, 16},
                            {"i32_32x32x8i8", 32, 32, 8, 1},
                            {"i32_16x16x16i8", 16, 16, 16, 1}};
constexpr Mfma kCdna3[] = {{"i32_32x32x4_2b_i8", 32, 32, 4, 2},
                           {"i32_16x16x4_4b_i8", 16, 16, 4, 4},
                           {"i32_4x4x4_16b_i8", 4, 4, 4, 16},
                           {"i32_32x32x16_i8", 32, 32, 16, 1},
                           {"i32_16x16x32_i8", 16, 16, 32, 1}};

std::string_view label_of(std::string_view generation) {
  static const std::vector<GpuGeneration> gens = gpu_generations();
  for (const GpuGeneration& g : gens)
    if (g.name == generation) return g.arch;
  throw std::logic_error("integer_mma.cpp: no generation " + std::string(generation));
}

IntegerMmaInstruction make(std::string name, std::string_view arch, std::string isa, int m, int n, int k,
                           std::string_view a, std::string_view b, bool saturate, int blocks = 1) {
  const IntType& ta = type_named(a);
  const IntType& tb = type_named(b);
  return {std::move(name), arch, std::move(isa), m,      n,      k,      blocks, ta.format,
          tb.format,       saturate,          ta.min, ta.max, tb.min, tb.max};
}

std::vector<IntegerMmaInstruction> build() {
  std::vector<IntegerMmaInstruction> out;
  const std::array<std::string_view, 2> bytes{"s8", "u8"}, nibbles{"s4", "u4"};
  for (const Generation& g : kNv)
    for (const Shape& s : g.shapes)
      for (bool sat : {false, true})
        for (std::string_view a : s.bits == 8 ? bytes : nibbles)
          for (std::string_view b : s.bits == 8 ? bytes : nibbles) {
            const std::string q = std::string(sat ? ".satfinite" : "") + ".s32." + std::string(a) + "." +
                                  std::string(b) + ".s32";
            out.push_back(make(std::string(g.id) + ".mma." + std::string(s.shape) + q, label_of(g.id),
                               "mma.sync.aligned." + std::string(s.shape) + ".row.col" + q, s.m, s.n, s.k, a, b,
                               sat));
          }
  for (bool sat : {false, true})
    for (std::string_view a : bytes)
      for (std::string_view b : bytes) {
        const std::string q = std::string(sat ? ".satfinite" : "") + ".s32." + std::string(a) + "." + std::string(b);
        out.push_back(make("hopper.wgmma" + q, label_of("hopper"), "wgmma.mma_async.sync.aligned.m64nNk32" + q, 64,
                           0, 32, a, b, sat));
      }
  for (bool sat : {false, true})
    for (std::string_view a : bytes)
      for (std::string_view b : bytes)
        out.push_back(make("blackwell.tcgen05.i8" + std::string(sat ? ".saturate" : "") + ".s32." + std::string(a) +
                               "." + std::string(b),
                           label_of("blackwell"),
                           "tcgen05.mma.cta_group::1.kind::i8 (m64/m128, nN, k32; instruction descriptor bit 3 = " +
                               std::string(sat ? "1: saturate)" : "0: wrap)"),
                           128, 0, 32, a, b, sat));
  for (std::string_view a : bytes)
    for (std::string_view b : bytes)
      out.push_back(make("nvidia.dp4a." + std::string(a) + "." + std::string(b), "sm_61 and later",
                         std::string("dp4a.") + (a == "s8" ? "s32" : "u32") + "." + (b == "s8" ? "s32" : "u32"), 1, 1,
                         4, a, b, false));
  for (std::string_view gen : {"cdna1", "cdna2"})
    for (const Mfma& f : kCdna12)
      out.push_back(make(std::string(gen) + ".mfma." + std::string(f.suffix), label_of(gen),
                         "v_mfma_" + std::string(f.suffix), f.m, f.n, f.k, "s8", "s8", false, f.blocks));
  for (const Mfma& f : kCdna3)
    out.push_back(make("cdna3.mfma." + std::string(f.suffix), label_of("cdna3"), "v_mfma_" + std::string(f.suffix),
                       f.m, f.n, f.k, "s8", "s8", false, f.blocks));
  return out;
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

void check_values(const IntegerMmaInstruction& i, const char* which, std::span<const std::int32_t> v, int lo,
                  int hi, std::string_view format) {
  for (std::size_t t = 0; t < v.size(); ++t)
    if (v[t] < lo || v[t] > hi)
      fail(i.name + ": " + which + "[" + std::to_string(t) + "] = " + std::to_string(v[t]) + " is not a " +
           std::string(format) + " value (" + std::to_string(lo) + " .. " + std::to_string(hi) + ")");
}

// One output's chain over k values of a and b (k need not be a multiple of the instruction's k: the last
// instruction's products past k are zeros).
std::int32_t chain(const IntegerMmaInstruction& i, const std::int32_t* a, const std::int32_t* b, std::size_t k,
                   std::int32_t c) {
  const auto step = static_cast<std::size_t>(i.k);
  std::array<std::int32_t, 64> pa{}, pb{};
  std::int32_t d = c;
  std::size_t first = 0;
  do {  // at least one instruction: k = 0 gives D = C
    const std::size_t count = std::min(step, k - first);
    std::fill(pa.begin(), pa.end(), 0);
    std::fill(pb.begin(), pb.end(), 0);
    std::copy_n(a + first, count, pa.begin());
    std::copy_n(b + first, count, pb.begin());
    d = integer_mma_step(i.saturate, pa.data(), pb.data(), i.k, d);
    first += step;
  } while (first < k);
  return d;
}

}  // namespace

std::span<const IntegerMmaInstruction> integer_mma_instructions() {
  static const std::vector<IntegerMmaInstruction> all = build();
  return all;
}

const IntegerMmaInstruction* find_integer_mma_instruction(std::string_view name) {
  for (const IntegerMmaInstruction& i : integer_mma_instructions())
    if (i.name == name) return &i;
  return nullptr;
}

std::int32_t integer_mma_chain(const IntegerMmaInstruction& i, std::span<const std::int32_t> a,
                               std::span<const std::int32_t> b, std::int32_t c) {
  if (a.size() != b.size())
    fail(i.name + ": a and b hold " + std::to_string(a.size()) + " and " + std::to_string(b.size()) + " values");
  check_values(i, "a", a, i.a_min, i.a_max, i.a);
  check_values(i, "b", b, i.b_min, i.b_max, i.b);
  return chain(i, a.data(), b.data(), a.size(), c);
}

void integer_matmul(const IntegerMmaInstruction& i, std::size_t m, std::size_t n, std::size_t k,
                    std::span<const std::int32_t> a, std::span<const std::int32_t> b_t,
                    std::span<const std::int32_t> c, std::span<std::int32_t> d) {
  if (a.size() != m * k || b_t.size() != n * k || (!c.empty() && c.size() != m * n) || d.size() != m * n)
    fail("integer_matmul: " + i.name + ": A must hold m x k = " + std::to_string(m * k) + ", B n x k = " +
         std::to_string(n * k) + ", C and D m x n = " + std::to_string(m * n) + " values");
  check_values(i, "a", a, i.a_min, i.a_max, i.a);
  check_values(i, "b", b_t, i.b_min, i.b_max, i.b);
  for (std::size_t r = 0; r < m; ++r)
    for (std::size_t col = 0; col < n; ++col)
      d[r * n + col] = chain(i, a.data() + r * k, b_t.data() + col * k, k, c.empty() ? 0 : c[r * n + col]);
}

}  // namespace lplab::kernels
