// The matrix-unit presets (mma.h) from parameter tables: per NVIDIA
// generation the fraction bits, the unit's width and the zero exponents; per
// instruction family the rule that gives an instruction its model; the
// instruction lists as their ISAs spell them. Parameters: MMA-Sim 2.1.1's
// (PyPI mmasim 2.1.1, nv_ptx/sim.py and amd/sim.py; docs/matrix-units.md).
// The operand types' constants and codes (section 1) are mma_types.cpp.
#include "lplab/kernels/mma.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "lplab/formats.h"
#include "lplab/formats/enum_table.h"
#include "lplab/formats/finfo.h"
#include "lplab/kernels/nearest_names.h"

namespace lplab::kernels {
namespace {

// ---------------------------------------------------------------------------
// 2. NVIDIA generations (MMA-Sim's nv_ptx/sim.py): F, the unit's width in
// bytes of operands per fused step (L = width / operand bytes, at most k),
// and a zero term's exponent for fp16 and fp32 output.
struct NvArch {
  std::string_view id, label;
  int fraction_bits, width_bytes, zero_fp16, zero_fp32;
};
constexpr std::array<NvArch, 7> kNvArchs{{
    {"volta", "Volta (sm_70)", 23, 4 * 2, -19, -131},
    {"turing", "Turing (sm_75)", 24, 8 * 2, -20, -132},
    {"ampere", "Ampere (sm_80)", 24, 8 * 2, -20, -132},
    {"ada", "Ada Lovelace (sm_89)", 24, 8 * 2, -20, -132},
    {"hopper", "Hopper (sm_90a)", 25, 16 * 2, -21, -133},
    {"blackwell", "Blackwell (sm_100a)", 25, 16 * 2, -21, -133},
    {"rtx_blackwell", "RTX Blackwell (sm_120a)", 25, 16 * 2, -21, -133},
}};

// mma shapes and types by the PTX ISA version that added them, and the
// generations that have each list.
constexpr std::string_view kMmaSm70[] = {"m8n8k4.f32.f16.f16.f32", "m8n8k4.f32.f16.f16.f16", "m8n8k4.f16.f16.f16.f16"};
constexpr std::string_view kMmaSm75[] = {"m16n8k8.f32.f16.f16.f32", "m16n8k8.f16.f16.f16.f16"};
constexpr std::string_view kMmaSm80[] = {"m8n8k4.f64.f64.f64.f64",     "m16n8k8.f32.tf32.tf32.f32",
                                         "m16n8k4.f32.tf32.tf32.f32",  "m16n8k16.f32.f16.f16.f32",
                                         "m16n8k16.f16.f16.f16.f16",   "m16n8k16.f32.bf16.bf16.f32",
                                         "m16n8k8.f32.bf16.bf16.f32"};
constexpr std::string_view kMmaSm90[] = {"m16n8k16.f64.f64.f64.f64", "m16n8k8.f64.f64.f64.f64",
                                         "m16n8k4.f64.f64.f64.f64"};
constexpr std::string_view kFp8[] = {"e5m2", "e4m3"};
constexpr std::string_view kF8F6F4[] = {"e5m2", "e4m3", "e3m2", "e2m3", "e2m1"};

// ---------------------------------------------------------------------------
// 3. AMD mfma suffixes (the CDNA1/2/3 ISA guides' v_mfma_* names, as MMA-Sim
// lists them) per generation.
constexpr std::string_view kCdna1[] = {
    "f32_32x32x2f32", "f32_32x32x1f32",  "f32_16x16x4f32",  "f32_16x16x1f32",  "f32_4x4x1f32",
    "f32_32x32x8f16", "f32_32x32x4f16",  "f32_16x16x16f16", "f32_16x16x4f16",  "f32_4x4x4f16",
    "f32_32x32x4bf16", "f32_32x32x2bf16", "f32_16x16x8bf16", "f32_16x16x2bf16", "f32_4x4x2bf16"};
constexpr std::string_view kCdna2[] = {"f64_16x16x4f64",     "f64_4x4x4f64",        "f32_32x32x8bf16_1k",
                                       "f32_32x32x4bf16_1k", "f32_16x16x16bf16_1k", "f32_16x16x4bf16_1k",
                                       "f32_4x4x4bf16_1k"};
constexpr std::string_view kCdna3[] = {
    "f64_16x16x4_f64",      "f64_4x4x4_4b_f64",     "f32_32x32x1_2b_f32",   "f32_16x16x1_4b_f32",
    "f32_4x4x1_16b_f32",    "f32_32x32x2_f32",      "f32_16x16x4_f32",      "f32_16x16x8_xf32",
    "f32_32x32x4_xf32",     "f32_32x32x4_2b_f16",   "f32_16x16x4_4b_f16",   "f32_4x4x4_16b_f16",
    "f32_32x32x8_f16",      "f32_16x16x16_f16",     "f32_32x32x4_2b_bf16",  "f32_16x16x4_4b_bf16",
    "f32_4x4x4_16b_bf16",   "f32_32x32x8_bf16",     "f32_16x16x16_bf16",    "f32_16x16x32_bf8_bf8",
    "f32_16x16x32_bf8_fp8", "f32_16x16x32_fp8_bf8", "f32_16x16x32_fp8_fp8", "f32_32x32x16_bf8_bf8",
    "f32_32x32x16_bf8_fp8", "f32_32x32x16_fp8_bf8", "f32_32x32x16_fp8_fp8"};

// ---------------------------------------------------------------------------
// 4. Parsing the ISAs' spellings.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

int to_int(std::string_view s) {
  int v = 0;
  for (char ch : s) v = v * 10 + (ch - '0');
  return v;
}

// "m16n8k16" -> 16, 8, 16.
void shape(std::string_view s, int& m, int& n, int& k) {
  const auto pn = s.find('n'), pk = s.find('k');
  m = to_int(s.substr(1, pn - 1));
  n = to_int(s.substr(pn + 1, pk - pn - 1));
  k = to_int(s.substr(pk + 1));
}

MmaType type_of(std::string_view s) {
  const MmaType t = mma_type(s);
  if (t == MmaType::none) throw std::logic_error("mma.cpp: unknown type " + std::string(s));
  return t;
}

int bytes(MmaType t) { return mma_type_info(t).bytes; }

// ---------------------------------------------------------------------------
// 5. The rules: an instruction's model from its family, generation and types.
MmaModel resolve_types(MmaModel m, const MmaInstruction& i) {
  m.k = i.k;
  m.emin_a = mma_type_info(i.a).emin;
  m.emin_b = mma_type_info(i.b).emin;
  m.emin_c = mma_type_info(i.c).emin;
  m.emin_d = mma_type_info(i.d).emin;
  if (i.scale != MmaType::none) m.emin_scale = mma_type_info(i.scale).emin;
  return m;
}

// NVIDIA's truncated fused steps (mma, wgmma, tcgen05): F and L by
// generation, to nearest fp16 for fp16 output, else truncated to fp32.
MmaModel nv_truncated(int fraction_bits, int width_bytes, int zero_fp16, int zero_fp32, const MmaInstruction& i) {
  MmaModel m;
  m.algorithm = MmaAlgorithm::truncated;
  const bool fp16_out = i.d == MmaType::f16;
  m.rounding = fp16_out ? MmaRounding::nearest_fp16 : MmaRounding::truncate_fp32;
  m.fraction_bits = fraction_bits;
  m.group = std::min(i.k, width_bytes / bytes(i.a));
  m.zero_exponent = fp16_out ? zero_fp16 : zero_fp32;
  return m;
}

MmaModel fma_model(MmaType d) {
  MmaModel m;
  m.algorithm = MmaAlgorithm::fma;
  m.rounding = d == MmaType::f64 ? MmaRounding::nearest_fp64 : MmaRounding::nearest_fp32;
  return m;
}

// mma/tcgen05 .block_scale (MMA-Sim: the same for both): k = 64 (fp4 x fp4)
// sums groups of 16 products before the scales; k = 32 scales each product.
MmaModel block_scaled(const MmaInstruction& i, int block) {
  MmaModel m;
  m.rounding = MmaRounding::truncate_fp32;
  m.scale_block = block;
  if (i.k == 64) {
    m.algorithm = MmaAlgorithm::group_scaled;
    m.sum_group = 16;
    m.fraction_bits = 35;
    m.group = 64;
    m.zero_exponent = -139;
  } else {
    m.algorithm = MmaAlgorithm::scaled;
    m.fraction_bits = 25;
    m.group = 32;
    m.zero_exponent = -133;
  }
  return m;
}

void add(std::vector<MmaInstruction>& out, MmaInstruction i, const MmaModel& m) {
  i.model = resolve_types(m, i);
  out.push_back(std::move(i));
}

// "m16n8k16.f32.bf16.bf16.f32" (optionally "kind::f8f6f4" after the shape) on `arch`.
void nv_mma(std::vector<MmaInstruction>& out, const NvArch& arch, std::string_view st, bool volta_shape) {
  std::string plain(st);
  const auto q = split(st, '.');
  MmaInstruction i;
  shape(q[0], i.m, i.n, i.k);
  const std::size_t t = q.size() - 4;  // d, a, b, c
  i.d = type_of(q[t]);
  i.a = type_of(q[t + 1]);
  i.b = type_of(q[t + 2]);
  i.c = type_of(q[t + 3]);
  i.name = std::string(arch.id) + ".mma." + plain;
  i.arch = arch.label;
  i.isa = "mma.sync.aligned." + std::string(q[0]) + ".row.col" + (q.size() == 6 ? ".kind::" + std::string(q[1]) : "") +
          "." + std::string(q[t]) + "." + std::string(q[t + 1]) + "." + std::string(q[t + 2]) + "." +
          std::string(q[t + 3]);
  if (i.a == MmaType::f64) return add(out, i, fma_model(MmaType::f64));
  // Turing runs Volta's m8n8k4 as Volta does (MMA-Sim: "fallback to Volta settings").
  const NvArch& p = volta_shape ? kNvArchs[0] : arch;
  MmaModel m = nv_truncated(p.fraction_bits, p.width_bytes, p.zero_fp16, p.zero_fp32, i);
  // Ada's fp8 mma keeps 13 fraction bits and an E8M13 result.
  if (arch.id == "ada" && (i.a == MmaType::e4m3 || i.a == MmaType::e5m2)) {
    m.fraction_bits = 13;
    if (i.d != MmaType::f16) m.rounding = MmaRounding::truncate_e8m13;
  }
  add(out, i, m);
}

// "m16n8k64.mxf4nvf4.block16.f32.e2m1.e2m1.f32.ue4m3" on RTX Blackwell.
void nv_mma_block_scale(std::vector<MmaInstruction>& out, const NvArch& arch, std::string_view kind, int block,
                        std::string_view a, std::string_view b, int k, std::string_view scale) {
  MmaInstruction i;
  i.m = 16, i.n = 8, i.k = k;
  i.a = type_of(a), i.b = type_of(b), i.c = i.d = MmaType::f32, i.scale = type_of(scale);
  const std::string tail = std::string(kind) + ".block" + std::to_string(block) + ".f32." + std::string(a) + "." +
                           std::string(b) + ".f32." + std::string(scale);
  i.name = std::string(arch.id) + ".mma.m16n8k" + std::to_string(k) + "." + tail;
  i.arch = arch.label;
  i.isa = "mma.sync.aligned.m16n8k" + std::to_string(k) + ".row.col.kind::" + std::string(kind) +
          ".block_scale.scale_vec::" + std::to_string(k / block) + "X.f32." + std::string(a) + "." +
          std::string(b) + ".f32." + std::string(scale);
  add(out, i, block_scaled(i, block));
}

void wgmma(std::vector<MmaInstruction>& out, std::string_view d, std::string_view a, std::string_view b, int k) {
  const NvArch& arch = kNvArchs[4];
  MmaInstruction i;
  i.m = 64, i.n = 0, i.k = k;
  i.a = type_of(a), i.b = type_of(b), i.c = i.d = type_of(d);
  i.name = "hopper.wgmma." + std::string(d) + "." + std::string(a) + "." + std::string(b);
  i.arch = arch.label;
  i.isa = "wgmma.mma_async.sync.aligned.m64nNk" + std::to_string(k) + "." + std::string(d) + "." + std::string(a) +
          "." + std::string(b);
  MmaModel m = nv_truncated(arch.fraction_bits, arch.width_bytes, arch.zero_fp16, arch.zero_fp32, i);
  // FP8 inputs: 13 fraction bits, an E8M13 result for fp32 output.
  if (i.a == MmaType::e4m3 || i.a == MmaType::e5m2) {
    m.fraction_bits = 13;
    if (i.d != MmaType::f16) m.rounding = MmaRounding::truncate_e8m13;
  }
  add(out, i, m);
}

void tcgen05(std::vector<MmaInstruction>& out, std::string_view kind, std::string_view d, std::string_view a,
             std::string_view b, int k) {
  const NvArch& arch = kNvArchs[5];
  MmaInstruction i;
  i.m = 128, i.n = 0, i.k = k;
  i.a = type_of(a), i.b = type_of(b), i.c = i.d = type_of(d);
  i.name = "blackwell.tcgen05." + std::string(kind) + "." + std::string(d) + "." + std::string(a) + "." +
           std::string(b);
  i.arch = arch.label;
  i.isa = "tcgen05.mma.cta_group::1.kind::" + std::string(kind) + " (m64/m128, nN, k" + std::to_string(k) + ")";
  add(out, i, nv_truncated(arch.fraction_bits, arch.width_bytes, arch.zero_fp16, arch.zero_fp32, i));
}

void tcgen05_block_scale(std::vector<MmaInstruction>& out, std::string_view kind, int block, std::string_view a,
                         std::string_view b, int k, std::string_view scale) {
  MmaInstruction i;
  i.m = 128, i.n = 0, i.k = k;
  i.a = type_of(a), i.b = type_of(b), i.c = i.d = MmaType::f32, i.scale = type_of(scale);
  i.name = "blackwell.tcgen05." + std::string(kind) + ".block" + std::to_string(block) + ".f32." + std::string(a) +
           "." + std::string(b) + "." + std::string(scale);
  i.arch = kNvArchs[5].label;
  i.isa = "tcgen05.mma.cta_group::1.kind::" + std::string(kind) + ".block_scale.scale_vec::" +
          std::to_string(k / block) + "X (m128, nN, k" + std::to_string(k) + ")";
  add(out, i, block_scaled(i, block));
}

// An AMD suffix: "f32_32x32x8f16" (CDNA1/2), "f32_32x32x8bf16_1k",
// "f32_32x32x4_2b_f16", "f32_16x16x32_fp8_bf8" (CDNA3).
void amd_mfma(std::vector<MmaInstruction>& out, std::string_view gen, std::string_view label, std::string_view sfx) {
  const auto q = split(sfx, '_');
  MmaInstruction i;
  i.d = i.c = type_of(q[0]);
  // The shape "MxNxK", maybe followed by the type (CDNA1/2: "32x32x8f16").
  const auto dims = split(q[1], 'x');
  std::size_t digits = 0;
  while (digits < dims[2].size() && dims[2][digits] >= '0' && dims[2][digits] <= '9') ++digits;
  i.m = to_int(dims[0]), i.n = to_int(dims[1]), i.k = to_int(dims[2].substr(0, digits));
  std::vector<std::string_view> types;
  if (digits < dims[2].size()) types.push_back(dims[2].substr(digits));
  bool bf16_1k = false;
  for (std::size_t t = 2; t < q.size(); ++t) {
    if (q[t] == "1k") bf16_1k = true;
    else if (q[t].back() != 'b') types.push_back(q[t]);  // "2b", "4b", "16b": blocks, not types
  }
  const bool xf32 = types[0] == "xf32";
  i.a = xf32 ? MmaType::tf32 : type_of(types[0]);
  i.b = xf32 ? MmaType::tf32 : type_of(types.size() > 1 ? types[1] : types[0]);
  i.name = std::string(gen) + ".mfma." + std::string(sfx);
  i.arch = label;
  i.isa = "v_mfma_" + std::string(sfx);
  MmaModel m;
  if ((i.a == MmaType::f64 || i.a == MmaType::f32)) {
    m = fma_model(i.d);
  } else if (i.a == MmaType::fp8 || i.a == MmaType::bf8) {
    m.algorithm = MmaAlgorithm::two_stage_split;
    m.rounding = MmaRounding::nearest_fp32;
    m.fraction_bits = 24, m.fraction_bits2 = 31, m.group = std::min(i.k, 16);
  } else if (gen == "cdna1") {
    m.algorithm = MmaAlgorithm::exact;
    m.rounding = MmaRounding::nearest_fp32;
    m.group = std::min(i.k, i.a == MmaType::f16 ? 4 : 2);
  } else if (gen == "cdna2") {
    m.algorithm = MmaAlgorithm::ftz_pairs;
    m.rounding = MmaRounding::nearest_fp32;
    m.sum_group = i.a == MmaType::bf16 && !bf16_1k ? 2 : 4;
    m.group = i.k;
  } else {
    m.algorithm = MmaAlgorithm::two_stage;
    m.rounding = MmaRounding::nearest_fp32;
    m.fraction_bits = 24, m.fraction_bits2 = 31, m.group = std::min(i.k, xf32 ? 4 : 8);
  }
  add(out, i, m);
}

std::vector<MmaInstruction> build() {
  std::vector<MmaInstruction> out;
  // NVIDIA mma, generation by generation, in MMA-Sim's order of lists.
  const auto lists = [&](const NvArch& arch, std::initializer_list<std::span<const std::string_view>> ls) {
    for (auto l : ls)
      for (auto st : l) nv_mma(out, arch, st, arch.id == "turing" && l.data() == std::data(kMmaSm70));
  };
  std::vector<std::string> sm89, sm120;
  for (int k : {32, 16})
    for (std::string_view d : {"f32", "f16"})
      for (auto a : kFp8)
        for (auto b : kFp8)
          sm89.push_back("m16n8k" + std::to_string(k) + "." + std::string(d) + "." + std::string(a) + "." +
                         std::string(b) + "." + std::string(d));
  for (std::string_view d : {"f32", "f16"})
    for (auto a : kF8F6F4)
      for (auto b : kF8F6F4)
        sm120.push_back("m16n8k32.f8f6f4." + std::string(d) + "." + std::string(a) + "." + std::string(b) + "." +
                        std::string(d));
  const std::vector<std::string_view> v89(sm89.begin(), sm89.end()), v120(sm120.begin(), sm120.end());
  lists(kNvArchs[0], {kMmaSm70});
  lists(kNvArchs[1], {kMmaSm75, kMmaSm70});
  lists(kNvArchs[2], {kMmaSm80, kMmaSm75});
  lists(kNvArchs[3], {v89, kMmaSm80, kMmaSm75});
  lists(kNvArchs[4], {kMmaSm90, kMmaSm80, kMmaSm75});
  lists(kNvArchs[5], {kMmaSm80, kMmaSm75});
  lists(kNvArchs[6], {v120, v89, kMmaSm80, kMmaSm75});
  // RTX Blackwell mma.block_scale.
  for (auto a : kF8F6F4)
    for (auto b : kF8F6F4) nv_mma_block_scale(out, kNvArchs[6], "mxf8f6f4", 32, a, b, 32, "ue8m0");
  nv_mma_block_scale(out, kNvArchs[6], "mxf4", 32, "e2m1", "e2m1", 64, "ue8m0");
  nv_mma_block_scale(out, kNvArchs[6], "mxf4nvf4", 32, "e2m1", "e2m1", 64, "ue8m0");
  nv_mma_block_scale(out, kNvArchs[6], "mxf4nvf4", 16, "e2m1", "e2m1", 64, "ue8m0");
  nv_mma_block_scale(out, kNvArchs[6], "mxf4nvf4", 16, "e2m1", "e2m1", 64, "ue4m3");
  // Hopper wgmma.
  wgmma(out, "f32", "tf32", "tf32", 8);
  wgmma(out, "f32", "f16", "f16", 16);
  wgmma(out, "f16", "f16", "f16", 16);
  wgmma(out, "f32", "bf16", "bf16", 16);
  for (std::string_view d : {"f32", "f16"})
    for (auto a : kFp8)
      for (auto b : kFp8) wgmma(out, d, a, b, 32);
  // Blackwell tcgen05.mma and its block_scale.
  tcgen05(out, "tf32", "f32", "tf32", "tf32", 8);
  tcgen05(out, "f16", "f32", "f16", "f16", 16);
  tcgen05(out, "f16", "f32", "bf16", "bf16", 16);
  tcgen05(out, "f16", "f16", "f16", "f16", 16);
  for (std::string_view d : {"f32", "f16"})
    for (auto a : kF8F6F4)
      for (auto b : kF8F6F4) tcgen05(out, "f8f6f4", d, a, b, 32);
  for (auto a : kF8F6F4)
    for (auto b : kF8F6F4) tcgen05_block_scale(out, "mxf8f6f4", 32, a, b, 32, "ue8m0");
  tcgen05_block_scale(out, "mxf4", 32, "e2m1", "e2m1", 64, "ue8m0");
  tcgen05_block_scale(out, "mxf4nvf4", 32, "e2m1", "e2m1", 64, "ue8m0");
  tcgen05_block_scale(out, "mxf4nvf4", 16, "e2m1", "e2m1", 64, "ue8m0");
  tcgen05_block_scale(out, "mxf4nvf4", 16, "e2m1", "e2m1", 64, "ue4m3");
  // AMD mfma: CDNA2 has CDNA1's instructions too.
  for (auto s : kCdna1) amd_mfma(out, "cdna1", "CDNA1 (MI100)", s);
  for (auto s : kCdna2) amd_mfma(out, "cdna2", "CDNA2 (MI200)", s);
  for (auto s : kCdna1) amd_mfma(out, "cdna2", "CDNA2 (MI200)", s);
  for (auto s : kCdna3) amd_mfma(out, "cdna3", "CDNA3 (MI300)", s);
  return out;
}

}  // namespace


std::span<const MmaInstruction> mma_instructions() {
  static const std::vector<MmaInstruction> all = build();
  return all;
}

const MmaInstruction* find_mma_instruction(std::string_view name) {
  for (const MmaInstruction& i : mma_instructions())
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<std::string_view> closest_mma_instructions(std::string_view name, std::size_t count) {
  std::vector<std::pair<std::size_t, std::string_view>> d;
  for (const MmaInstruction& i : mma_instructions()) d.emplace_back(edit_distance(name, i.name), i.name);
  std::stable_sort(d.begin(), d.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < d.size() && i < count; ++i) out.push_back(d[i].second);
  return out;
}

double mma_chain(const MmaInstruction& i, std::span<const double> a, std::span<const double> b, double c,
                 std::span<const double> sa, std::span<const double> sb, std::vector<MmaStepTrace>* steps) {
  const std::size_t k = static_cast<std::size_t>(i.k);
  if (a.size() != b.size() || a.size() % k != 0)
    throw std::invalid_argument("mma_chain: a and b need the same length, a multiple of k = " + std::to_string(k));
  const std::size_t blk = static_cast<std::size_t>(i.model.scale_block);
  if (blk != 0 && (sa.size() != a.size() / blk || sb.size() != a.size() / blk))
    throw std::invalid_argument("mma_chain: " + i.name + " takes one scale per " + std::to_string(blk) +
                                " elements of a and of b");
  const double d = mma::chain(i.model, a.data(), b.data(), a.size(), c, sa.data(), sb.data(), 0, nullptr);
  if (steps == nullptr) return d;
  // Every step: the chain again, one instruction at a time (an MmaTrace
  // holds k / L <= MmaTrace::kCapacity steps of one), as mma::chain links
  // them: C in the instruction's C type first, in D's after.
  steps->clear();
  double link = c;
  for (std::size_t first = 0; first < a.size(); first += k) {
    MmaTrace one;
    link = mma::instruction(i.model, a.data() + first, b.data() + first, link,
                            first == 0 ? i.model.emin_c : i.model.emin_d, blk ? sa.data() + first / blk : nullptr,
                            blk ? sb.data() + first / blk : nullptr, &one);
    if (one.total != one.steps) throw std::logic_error("mma_chain: " + i.name + " has more steps than a trace holds");
    for (int s = 0; s < one.steps; ++s) {
      steps->push_back(one.step[s]);
      steps->back().first += static_cast<int>(first);
    }
  }
  // The same arithmetic as mma::chain's, so the same D (NaN's bits aside).
  if (!(link == d || (link != link && d != d)))
    throw std::logic_error("mma_chain: " + i.name + "'s traced chain ends at a D of its own");
  return d;
}

const char* mma_algorithm_name(MmaAlgorithm a) { return enum_name(a); }

// The label listings show: the entry's first alias ("RZ fp32").
const char* mma_rounding_name(MmaRounding r) {
  const EnumEntry<MmaRounding>* e = enum_entry(r);
  return e != nullptr ? e->aliases[0] : "?";
}

std::string mma_parameters(const MmaInstruction& i) {
  const MmaModel& m = i.model;
  std::string s = mma_algorithm_name(m.algorithm);
  const auto kv = [&](const char* key, int v) { s += std::string(", ") + key + " = " + std::to_string(v); };
  switch (m.algorithm) {
    case MmaAlgorithm::truncated:
    case MmaAlgorithm::scaled:
      kv("L", m.group), kv("F", m.fraction_bits), kv("e_zero", m.zero_exponent);
      break;
    case MmaAlgorithm::group_scaled:
      kv("L", m.group), kv("G", m.sum_group), kv("F", m.fraction_bits), kv("e_zero", m.zero_exponent);
      break;
    case MmaAlgorithm::two_stage:
    case MmaAlgorithm::two_stage_split:
      kv("L", m.group), kv("F", m.fraction_bits), kv("F2", m.fraction_bits2);
      break;
    case MmaAlgorithm::exact: kv("L", m.group); break;
    case MmaAlgorithm::ftz_pairs: kv("P", m.sum_group); break;
    case MmaAlgorithm::fma: break;
  }
  if (m.scale_block) kv("scale block", m.scale_block);
  return s + ", " + mma_rounding_name(m.rounding);
}

}  // namespace lplab::kernels
