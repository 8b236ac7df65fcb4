// The hardware probe (lplab/cuda/probe.h): each instruction's kernel runs
// one instruction per tile on generated codes; the host computes each D
// element with the instruction's model (kernels::mma_chain over the
// element's row of A, column of B and C) and compares the codes.
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common.cuh"
#include "lplab/cuda/probe.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/random.h"
#include "probe_kernels.cuh"

namespace lplab::cuda {
namespace {

namespace pk = probe_kernels;
using kernels::MmaType;
using u64 = std::uint64_t;

template <class Op>
__global__ void tile_kernel(const u64* a, const u64* b, const u64* c, u64* d) {
  const std::size_t tile = blockIdx.x;
  constexpr int M = Op::M, N = Op::N, K = Op::kK;
  Op::run(a + tile * M * K, b + tile * N * K, c + tile * M * N, d + tile * M * N, static_cast<int>(threadIdx.x));
}

struct Kernel {
  const char* suffix;  // the preset's name after "<arch>."
  int min_cc;          // 80, 90
  bool sm90a_only;     // wgmma: Hopper's arch-specific target
  int m, n, k, threads;
  void (*launch)(const u64*, const u64*, const u64*, u64*, unsigned tiles);
};

template <class Op, int Threads>
Kernel kernel(const char* suffix, int min_cc, bool sm90a) {
  return {suffix, min_cc, sm90a, Op::M, Op::N, Op::kK, Threads,
          [](const u64* a, const u64* b, const u64* c, u64* d, unsigned tiles) {
            tile_kernel<Op><<<tiles, Threads>>>(a, b, c, d);
          }};
}

// Every instruction the probe has a kernel for.
const std::vector<Kernel>& kernels_table() {
  static const std::vector<Kernel> table = {
      kernel<pk::MmaHalf<false, false, 16>, 32>("mma.m16n8k16.f32.f16.f16.f32", 80, false),
      kernel<pk::MmaHalf<false, true, 16>, 32>("mma.m16n8k16.f16.f16.f16.f16", 80, false),
      kernel<pk::MmaHalf<true, false, 16>, 32>("mma.m16n8k16.f32.bf16.bf16.f32", 80, false),
      kernel<pk::MmaHalf<false, false, 8>, 32>("mma.m16n8k8.f32.f16.f16.f32", 80, false),
      kernel<pk::MmaHalf<false, true, 8>, 32>("mma.m16n8k8.f16.f16.f16.f16", 80, false),
      kernel<pk::MmaHalf<true, false, 8>, 32>("mma.m16n8k8.f32.bf16.bf16.f32", 80, false),
      kernel<pk::MmaTf32<8>, 32>("mma.m16n8k8.f32.tf32.tf32.f32", 80, false),
      kernel<pk::MmaTf32<4>, 32>("mma.m16n8k4.f32.tf32.tf32.f32", 80, false),
      kernel<pk::MmaF64<8, 4>, 32>("mma.m8n8k4.f64.f64.f64.f64", 80, false),
      kernel<pk::MmaF64<16, 4>, 32>("mma.m16n8k4.f64.f64.f64.f64", 90, false),
      kernel<pk::MmaF64<16, 8>, 32>("mma.m16n8k8.f64.f64.f64.f64", 90, false),
      kernel<pk::MmaF64<16, 16>, 32>("mma.m16n8k16.f64.f64.f64.f64", 90, false),
      kernel<pk::Wgmma<2, false, pk::WgF32Bf16>, 128>("wgmma.f32.bf16.bf16", 90, true),
      kernel<pk::Wgmma<2, false, pk::WgF32F16>, 128>("wgmma.f32.f16.f16", 90, true),
      kernel<pk::Wgmma<2, true, pk::WgF16F16>, 128>("wgmma.f16.f16.f16", 90, true),
      kernel<pk::Wgmma<4, false, pk::WgF32Tf32>, 128>("wgmma.f32.tf32.tf32", 90, true),
      kernel<pk::Wgmma<1, false, pk::WgF32E4E4>, 128>("wgmma.f32.e4m3.e4m3", 90, true),
      kernel<pk::Wgmma<1, false, pk::WgF32E4E5>, 128>("wgmma.f32.e4m3.e5m2", 90, true),
      kernel<pk::Wgmma<1, false, pk::WgF32E5E4>, 128>("wgmma.f32.e5m2.e4m3", 90, true),
      kernel<pk::Wgmma<1, false, pk::WgF32E5E5>, 128>("wgmma.f32.e5m2.e5m2", 90, true),
      kernel<pk::Wgmma<1, true, pk::WgF16E4E4>, 128>("wgmma.f16.e4m3.e4m3", 90, true),
      kernel<pk::Wgmma<1, true, pk::WgF16E4E5>, 128>("wgmma.f16.e4m3.e5m2", 90, true),
      kernel<pk::Wgmma<1, true, pk::WgF16E5E4>, 128>("wgmma.f16.e5m2.e4m3", 90, true),
      kernel<pk::Wgmma<1, true, pk::WgF16E5E5>, 128>("wgmma.f16.e5m2.e5m2", 90, true),
  };
  return table;
}

// The preset family of a compute capability (mma.h's <arch>).
std::string arch_of(int major, int minor) {
  const int cc = major * 10 + minor;
  if (cc >= 120) return "rtx_blackwell";
  if (cc >= 100) return "blackwell";
  if (cc >= 90) return "hopper";
  if (cc >= 89) return "ada";
  if (cc >= 80) return "ampere";
  if (cc >= 75) return "turing";
  return "volta";
}

bool runs_on(const Kernel& k, int major, int minor) {
  const int cc = major * 10 + minor;
  return k.sm90a_only ? cc == 90 : cc >= k.min_cc;
}

// ---------------------------------------------------------------------------
// Operand codes. A type's fields from its width and smallest normal
// exponent: bias = 1 - emin, exponent bits = bit_width(bias) + 1; tf32 is
// an fp32 code with its low 13 bits zero.
struct Fields {
  int bits, ebits, mbits, shift;
  bool ieee;  // infinities, and NaN at the all-ones exponent (E4M3: NaN at S.1111.111 only)
  int bias() const { return (1 << (ebits - 1)) - 1; }
};

Fields fields_of(MmaType t) {
  const kernels::MmaTypeInfo& info = kernels::mma_type_info(t);
  const int bias = 1 - info.emin;
  const int ebits = std::bit_width(static_cast<unsigned>(bias)) + 1;
  const int shift = t == MmaType::tf32 ? 13 : 0;
  const int bits = t == MmaType::tf32 ? 19 : 8 * info.bytes;
  return {bits, ebits, bits - 1 - ebits, shift, t != MmaType::e4m3};
}

class Codes {
 public:
  explicit Codes(u64 seed) : state_(seed) {}
  u64 next() { return kernels::splitmix64(state_++); }

  // Mode 0: any finite code. 1: exponents within 2 of the bias, random
  // signs. 2: exponents spread 12 either side, 1/16 zeros, 1/16 subnormals.
  // 3: as 2 with 1/16 infinities (E4M3: NaN) and 1/16 NaN.
  u64 code(const Fields& f, int mode) {
    const u64 r = next();
    const u64 sign = r & 1;
    const u64 mant = (r >> 1) & ((u64{1} << f.mbits) - 1);
    const int top = (1 << f.ebits) - 1;
    const int emax = f.ieee ? top - 1 : top;
    int e = 0;
    const int pick = static_cast<int>((r >> 60) & 15);
    if (mode == 0) {
      e = static_cast<int>((r >> 40) % static_cast<u64>(emax + 1));
    } else if (mode == 1) {
      e = f.bias() + static_cast<int>((r >> 40) % 5) - 2;
    } else if (pick == 0) {
      return assemble(f, sign, 0, 0);
    } else if (pick == 1) {
      return assemble(f, sign, 0, mant);
    } else if (mode == 3 && pick == 2) {
      return f.ieee ? assemble(f, sign, top, 0) : assemble(f, sign, top, (u64{1} << f.mbits) - 1);
    } else if (mode == 3 && pick == 3) {
      return assemble(f, sign, top, (u64{1} << f.mbits) - 1);
    } else {
      e = f.bias() + static_cast<int>((r >> 40) % 25) - 12;
    }
    e = std::clamp(e, 1, emax);
    u64 m = mant;
    if (!f.ieee && e == top && m == (u64{1} << f.mbits) - 1) m -= 1;  // not E4M3's NaN
    return assemble(f, sign, e, m);
  }

 private:
  static u64 assemble(const Fields& f, u64 sign, int e, u64 m) {
    return ((sign << (f.bits - 1)) | (static_cast<u64>(e) << f.mbits) | m) << f.shift;
  }
  u64 state_;
};

std::string hex(u64 code, int bits) {
  std::ostringstream s;
  s << "0x" << std::hex;
  s.width((bits + 3) / 4);
  s.fill('0');
  s << code;
  return s.str();
}

ProbeCase run_case(const Kernel& k, const kernels::MmaInstruction& ins, const ProbeOptions& o) {
  const std::size_t tiles = o.tiles;
  const auto M = static_cast<std::size_t>(k.m), N = static_cast<std::size_t>(k.n), K = static_cast<std::size_t>(k.k);
  const Fields fa = fields_of(ins.a), fb = fields_of(ins.b), fc = fields_of(ins.c), fd = fields_of(ins.d);
  std::vector<u64> a(tiles * M * K), b(tiles * N * K), c(tiles * M * N);
  Codes gen(o.seed ^ std::hash<std::string>{}(ins.name));
  for (std::size_t tile = 0; tile < tiles; ++tile) {
    const int mode = static_cast<int>(tile % 4);
    for (std::size_t e = 0; e < M * K; ++e) a[tile * M * K + e] = gen.code(fa, mode);
    for (std::size_t e = 0; e < N * K; ++e) b[tile * N * K + e] = gen.code(fb, mode);
    for (std::size_t e = 0; e < M * N; ++e) c[tile * M * N + e] = gen.code(fc, mode == 0 ? 2 : mode);
  }
  const Buffer<u64> da(a), db(b), dc(c), dd(c.size());
  k.launch(da.data(), db.data(), dc.data(), dd.data(), static_cast<unsigned>(tiles));
  detail::check_kernel(k.suffix);
  const std::vector<u64> d = dd.to_host();

  ProbeCase out{ins.name, ins.isa, tiles * M * N, 0, 0, {}};
  const int dbits = fd.bits + fd.shift;
  const u64 dmask = dbits >= 64 ? ~u64{0} : (u64{1} << dbits) - 1;
  std::vector<double> row(K), col(K);
  for (std::size_t tile = 0; tile < tiles; ++tile)
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        for (std::size_t t = 0; t < K; ++t) {
          row[t] = kernels::mma_decode(ins.a, a[(tile * M + i) * K + t]);
          col[t] = kernels::mma_decode(ins.b, b[(tile * N + j) * K + t]);
        }
        const std::size_t q = (tile * M + i) * N + j;
        const double cv = kernels::mma_decode(ins.c, c[q]);
        const double model = kernels::mma_chain(ins, row, col, cv);
        const u64 want = kernels::mma_encode(ins.d, model) & dmask, got = d[q] & dmask;
        if (want == got) continue;
        if (std::isnan(kernels::mma_decode(ins.d, got)) && std::isnan(model)) {
          ++out.nan_payload;
          continue;
        }
        ++out.differ;
        if (out.examples.size() >= o.max_examples) continue;
        std::ostringstream s;
        s << "tile " << tile << " (operands mode " << tile % 4 << ") D[" << i << "][" << j << "]: GPU "
          << hex(got, dbits) << " = " << kernels::mma_decode(ins.d, got) << ", model " << hex(want, dbits) << " = "
          << model << "; C " << hex(c[q], fc.bits + fc.shift) << "; A row";
        for (std::size_t t = 0; t < K; ++t) s << ' ' << hex(a[(tile * M + i) * K + t], fa.bits + fa.shift);
        s << "; B column";
        for (std::size_t t = 0; t < K; ++t) s << ' ' << hex(b[(tile * N + j) * K + t], fb.bits + fb.shift);
        out.examples.push_back(s.str());
      }
  return out;
}

}  // namespace

std::vector<std::string> probe_instructions(int major, int minor) {
  const std::string arch = arch_of(major, minor);
  std::vector<std::string> out;
  for (const Kernel& k : kernels_table()) {
    const std::string name = arch + "." + k.suffix;
    if (runs_on(k, major, minor) && kernels::find_mma_instruction(name) != nullptr) out.push_back(name);
  }
  return out;
}

ProbeReport probe(const ProbeOptions& o) {
  if (o.tiles == 0) detail::fail("probe: tiles must be at least 1");
  const Device dev = require_device();
  ProbeReport r;
  r.device = dev;
  r.arch = arch_of(dev.major, dev.minor);
  const std::vector<std::string> names = probe_instructions(dev.major, dev.minor);
  for (const std::string& want : o.only)
    if (std::find(names.begin(), names.end(), want) == names.end())
      detail::fail("probe: " + want + " is not an instruction the probe runs on " + dev.name + " (sm_" +
                   std::to_string(dev.major * 10 + dev.minor) + ")");
  for (const Kernel& k : kernels_table()) {
    const std::string name = r.arch + "." + k.suffix;
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), name) == o.only.end()) continue;
    r.cases.push_back(run_case(k, *kernels::find_mma_instruction(name), o));
  }
  for (const kernels::MmaInstruction& i : kernels::mma_instructions())
    if (i.name.rfind(r.arch + ".", 0) == 0 && std::find(names.begin(), names.end(), i.name) == names.end())
      r.not_run.push_back(i.name);
  return r;
}

}  // namespace lplab::cuda
