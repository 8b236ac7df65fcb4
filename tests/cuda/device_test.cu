// The portable core in device code, built wherever nvcc is (CI included) and
// run only on a machine with a CUDA device:
// - the format types: a kernel converts floats with several policies;
// - the matmul accumulation models (tensor_core_step.h, exact_sum.h): every
//   accumulator preset the portable core computes, resolved for operands of
//   every catalog format, on operands decoded on the device;
// - the scale rules (scale_rules.h): every rule for every element and scale
//   format, and the per-tensor scale, over amax values of every binade;
// - the model of cvt.rs (cvt_rs.h) on the device, and, on an sm_100 GPU
//   (B200), the instruction itself against it for every form.
// The results must equal the host's, bit for bit.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/exact_sum.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scale_rules.h"
#include "lplab/kernels/tensor_core_step.h"

namespace {

using namespace lplab;

struct Out {
  std::uint16_t f16, bf16, f16_rz;
  std::uint8_t e4m3, e4m3_sat, e5m2, e8m0, e2m3, e2m1;
  std::uint16_t sum;
};

__host__ __device__ Out convert_all(float x) {
  Out o;
  o.f16 = float16(x).bits();
  o.bf16 = bfloat16(x).bits();
  o.f16_rz = convert<float16>(x, Round::toward_zero).bits();
  o.e4m3 = float8_e4m3fn(x).bits();
  o.e4m3_sat = convert<float8_e4m3fn>(x, Round::nearest_even, Overflow::saturate).bits();
  o.e5m2 = float8_e5m2(x).bits();
  o.e8m0 = convert<float8_e8m0fnu>(x, Round::upward, Overflow::saturate).bits();
  o.e2m3 = float6_e2m3fn(x).bits();
  o.e2m1 = float4_e2m1fn(x).bits();
  o.sum = fma(bfloat16(x), bfloat16(3.0f), bfloat16(x)).bits();
  return o;
}

__global__ void kernel(const float* in, Out* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = convert_all(in[i]);
}

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(Device, conversions_match_host_bit_for_bit) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: device code compiled, not run";
  const int n = 1 << 20;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = detail::bit_cast<float>(static_cast<std::uint32_t>(i) * 4099u);
  float* din = nullptr;
  Out* dout = nullptr;
  ASSERT_EQ(cudaMalloc(&din, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, n * sizeof(Out)), cudaSuccess);
  cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  kernel<<<(n + 255) / 256, 256>>>(din, dout, n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Out> out(n);
  cudaMemcpy(out.data(), dout, n * sizeof(Out), cudaMemcpyDeviceToHost);
  cudaFree(din);
  cudaFree(dout);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const Out h = convert_all(in[i]);
    const Out& d = out[i];
    bad += h.f16 != d.f16 || h.bf16 != d.bf16 || h.f16_rz != d.f16_rz || h.e4m3 != d.e4m3 ||
           h.e4m3_sat != d.e4m3_sat || h.e5m2 != d.e5m2 || h.e8m0 != d.e8m0 ||
           h.e2m3 != d.e2m3 || h.e2m1 != d.e2m1 || h.sum != d.sum;
  }
  EXPECT_EQ(bad, 0);
}

// ---------------------------------------------------------------------------
// Accumulation chains: one output is the chain of a row of A with a row of B
// (k products) under one model.

enum class Chain : int { tensor_core, fp16, bf16 };

struct ChainCase {
  Chain chain;
  kernels::TensorCoreModel tc;  // for Chain::tensor_core
};

__host__ __device__ double run_chain(const ChainCase& c, const float* a, const float* b, int k) {
  if (c.chain == Chain::tensor_core) return kernels::tensor_core::dot(c.tc, a, b, 1, static_cast<std::size_t>(k));
  double acc = 0.0;
  for (int t = 0; t < k; ++t) {
    const double prod = static_cast<double>(a[t]) * static_cast<double>(b[t]);
    acc = c.chain == Chain::fp16 ? kernels::narrow_add<float16>(acc, prod) : kernels::narrow_add<bfloat16>(acc, prod);
  }
  return acc;
}

// Operand codes of T decoded as the matmul decodes them (NaN and infinite
// codes become 0: the chains' specials are the conversions test's subject).
template <class T>
__host__ __device__ float decode_operand(std::uint64_t code) {
  const T x = T::from_bits(static_cast<typename T::storage_type>(code));
  const float v = convert<float>(x);
  return v - v == 0.0f ? v : 0.0f;
}

using Catalog = catalog_tuple;  // a kernel takes a format by its catalog index

// out[c * rows + r] = case c on row r of A and B (rows x k codes each), on
// operands of the catalog's format I.
template <std::size_t I>
__global__ void chains_kernel(const ChainCase* cases, int ncases, const std::uint64_t* a_codes,
                              const std::uint64_t* b_codes, int rows, int k, float* scratch, double* out) {
  const int o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= ncases * rows) return;
  using T = std::tuple_element_t<I, Catalog>;
  const int c = o / rows, r = o % rows;
  float* a = scratch + static_cast<std::size_t>(o) * 2 * k;
  float* b = a + k;
  for (int t = 0; t < k; ++t) {
    a[t] = decode_operand<T>(a_codes[r * k + t]);
    b[t] = decode_operand<T>(b_codes[r * k + t]);
  }
  out[o] = run_chain(cases[c], a, b, k);
}

// The presets the portable core computes, resolved for operands of T: every
// tensor-core preset and the fp16/bf16 chains (fp64 and fp32 are the host's
// exact sum and GEMM, bf16_dot2 an x86 instruction).
template <class T>
std::vector<ChainCase> chain_cases() {
  const kernels::OperandRange r = kernels::operand_range<T>();
  std::vector<ChainCase> out;
  for (const kernels::AccumulatorPreset& p : kernels::accumulator_presets()) {
    const kernels::AccumulatorModel m = kernels::resolve_accumulator(p.model, r, r);
    if (m.kind == kernels::Accumulator::tensor_core)
      out.push_back({Chain::tensor_core, {m.block, m.fraction_bits, m.result_bits, m.zero_exponent, m.promote_every,
                                          r.emin, r.emin}});
    else if (m.kind == kernels::Accumulator::fp16) out.push_back({Chain::fp16, {}});
    else if (m.kind == kernels::Accumulator::bf16) out.push_back({Chain::bf16, {}});
  }
  return out;
}

// Mismatches between device and host for the catalog's format I ("" when none).
template <std::size_t I>
std::string chains_differ(const char* name) {
  using T = std::tuple_element_t<I, Catalog>;
  constexpr int rows = 64, k = 256;  // k: whole blocks and two promotions of 128
  const std::vector<ChainCase> cases = chain_cases<T>();
  std::vector<std::uint64_t> a(rows * k), b(rows * k);
  const std::uint64_t mask = finfo<T>::bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << finfo<T>::bits) - 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = kernels::splitmix64(2 * i) & mask;
    b[i] = kernels::splitmix64(2 * i + 1) & mask;
  }
  const int outputs = static_cast<int>(cases.size()) * rows;
  ChainCase* dcases = nullptr;
  std::uint64_t *da = nullptr, *db = nullptr;
  float* scratch = nullptr;
  double* dout = nullptr;
  if (cudaMalloc(&dcases, cases.size() * sizeof(ChainCase)) != cudaSuccess ||
      cudaMalloc(&da, a.size() * 8) != cudaSuccess || cudaMalloc(&db, b.size() * 8) != cudaSuccess ||
      cudaMalloc(&scratch, static_cast<std::size_t>(outputs) * 2 * k * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&dout, static_cast<std::size_t>(outputs) * sizeof(double)) != cudaSuccess)
    return std::string(name) + ": cudaMalloc failed";
  cudaMemcpy(dcases, cases.data(), cases.size() * sizeof(ChainCase), cudaMemcpyHostToDevice);
  cudaMemcpy(da, a.data(), a.size() * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 8, cudaMemcpyHostToDevice);
  chains_kernel<I><<<(outputs + 127) / 128, 128>>>(dcases, static_cast<int>(cases.size()), da, db, rows, k, scratch,
                                                   dout);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  std::vector<double> out(static_cast<std::size_t>(outputs));
  cudaMemcpy(out.data(), dout, out.size() * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(dcases);
  cudaFree(da);
  cudaFree(db);
  cudaFree(scratch);
  cudaFree(dout);
  if (!ran) return std::string(name) + ": the kernel failed";
  int bad = 0;
  std::vector<float> ha(k), hb(k);
  for (int o = 0; o < outputs; ++o) {
    const int c = o / rows, r = o % rows;
    for (int t = 0; t < k; ++t) {
      ha[t] = decode_operand<T>(a[r * k + t]);
      hb[t] = decode_operand<T>(b[r * k + t]);
    }
    const double h = run_chain(cases[c], ha.data(), hb.data(), k);
    // A NaN sum (inf - inf in an fp16 chain) is compared as NaN: x86 gives
    // its default NaN (negative), NVIDIA's fp64 arithmetic its canonical one.
    if (h != h && out[o] != out[o]) continue;
    bad += std::memcmp(&h, &out[o], sizeof h) != 0;
  }
  return bad == 0 ? "" : std::string(name) + ": " + std::to_string(bad) + " of " + std::to_string(outputs) + " differ; ";
}

#define LPLAB_DEVICE_NAME(type, names, description) #type,
constexpr const char* kCatalogNames[] = {LPLAB_FORMAT_CATALOG(LPLAB_DEVICE_NAME)};
#undef LPLAB_DEVICE_NAME

template <std::size_t... I>
std::string every_format_differs(std::index_sequence<I...>) {
  return (chains_differ<I>(kCatalogNames[I]) + ...);
}

TEST(Device, every_accumulation_model_on_every_format_matches_host) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: device code compiled, not run";
  EXPECT_EQ(every_format_differs(std::make_index_sequence<lplab::float_format_count>{}), "");
}

// ---------------------------------------------------------------------------
// Scale rules: for amax bits a, the block scale under each rule (scale code
// and factor bits) and the per-tensor scale for a few margins.

using ElemScalePairs = std::tuple<
    std::pair<float8_e4m3fn, float8_e8m0fnu>, std::pair<float8_e5m2, float8_e8m0fnu>,
    std::pair<float8_e4m3fnuz, float8_e8m0fnu>, std::pair<float8_e5m2fnuz, float8_e8m0fnu>,
    std::pair<float6_e2m3fn, float8_e8m0fnu>, std::pair<float6_e3m2fn, float8_e8m0fnu>,
    std::pair<float4_e2m1fn, float8_e8m0fnu>, std::pair<float4_e2m1fn, float8_e4m3fn>,
    std::pair<float6_e2m3fn, float8_e4m3fn>, std::pair<float8_e4m3fn, float8_e4m3fn>>;
// Every scale rule, from the list that declares them.
#define LPLAB_DEVICE_RULE(name, doc) +1
constexpr int kRuleCount = 0 LPLAB_SCALE_RULES(LPLAB_DEVICE_RULE);
#undef LPLAB_DEVICE_RULE
constexpr int kScaleOutputs = kRuleCount * 2 + 5;  // (code, factor) per rule, then a scale per margin below

template <std::size_t I>
__host__ __device__ void scale_outputs(std::uint32_t amax_bits, std::uint32_t* out) {
  using Elem = typename std::tuple_element_t<I, ElemScalePairs>::first_type;
  using Scale = typename std::tuple_element_t<I, ElemScalePairs>::second_type;
  const float s_enc = kernels::scale_rules::encode_scale<Elem, Scale>(amax_bits ^ 0x0100'0000u);
  const float s_enc_te = kernels::scale_rules::encode_scale_te<Elem, Scale>(amax_bits ^ 0x0100'0000u);
  int o = 0;
  for (int r = 0; r < kRuleCount; ++r) {
    const auto rule = static_cast<kernels::ScaleRule>(r);  // the list's order is the enum's
    Scale scale{};
    float factor = 0;
    const float enc = rule == kernels::ScaleRule::amax_ratio ? s_enc : rule == kernels::ScaleRule::amax_ratio_te ? s_enc_te : 1.0f;
    kernels::scale_rules::block_scale<Elem, Scale>(rule, amax_bits, enc, scale, factor);
    out[o++] = scale.bits();
    // amax_ratio_te's factor is NaN for a NaN amax: x86 keeps the operand's
    // NaN, NVIDIA's fp32 arithmetic gives its canonical one; one NaN here.
    out[o++] = factor != factor ? 0x7FC0'0000u : detail::bit_cast<std::uint32_t>(factor);
  }
  for (int m : {-130, -3, 0, 2, 150})
    out[o++] = detail::bit_cast<std::uint32_t>(
        kernels::scale_rules::tensor_scale<Elem>(detail::bit_cast<float>(amax_bits), m));
}

template <std::size_t I>
__global__ void scales_kernel(const std::uint32_t* amax, int n, std::uint32_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) scale_outputs<I>(amax[i], out + static_cast<std::size_t>(i) * kScaleOutputs);
}

// amax bits: every exponent field with a few significands, +inf and a NaN.
std::vector<std::uint32_t> amax_inputs() {
  std::vector<std::uint32_t> v{0, 0x7F80'0000, 0x7FC0'0000};
  for (std::uint32_t e = 0; e < 255; ++e)
    for (std::uint32_t m : {0u, 1u, 0x20'0000u, 0x60'0000u, 0x7F'FFFFu}) v.push_back(e << 23 | m);
  return v;
}

template <std::size_t I>
int scale_mismatches() {
  const std::vector<std::uint32_t> in = amax_inputs();
  const int n = static_cast<int>(in.size());
  std::uint32_t *din = nullptr, *dout = nullptr;
  if (cudaMalloc(&din, in.size() * 4) != cudaSuccess || cudaMalloc(&dout, in.size() * 4 * kScaleOutputs) != cudaSuccess)
    return -1;
  cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice);
  scales_kernel<I><<<(n + 127) / 128, 128>>>(din, n, dout);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  std::vector<std::uint32_t> out(in.size() * kScaleOutputs);
  cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost);
  cudaFree(din);
  cudaFree(dout);
  if (!ran) return -1;
  int bad = 0;
  std::uint32_t host[kScaleOutputs];
  for (int i = 0; i < n; ++i) {
    scale_outputs<I>(in[i], host);
    bad += std::memcmp(host, &out[static_cast<std::size_t>(i) * kScaleOutputs], sizeof host) != 0;
  }
  return bad;
}

template <std::size_t... I>
std::string every_pair_differs(std::index_sequence<I...>) {
  std::string errors;
  ((errors += scale_mismatches<I>() == 0 ? "" : "pair " + std::to_string(I) + " differs; "), ...);
  return errors;
}

TEST(Device, every_scale_rule_matches_host) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: device code compiled, not run";
  EXPECT_EQ(every_pair_differs(std::make_index_sequence<std::tuple_size_v<ElemScalePairs>>{}), "");
}

// cvt.rs: d for each group of 4 (2) inputs with its rbits, by the model
// (any device) and by the instruction (sm_100a code only; elsewhere the
// sentinel 0xFFFFFFFF, and the test says SKIPPED).
template <kernels::CvtRsForm F>
__device__ std::uint32_t cvt_rs_instruction(const float* x, std::uint32_t r) {
  std::uint32_t d = 0xFFFF'FFFFu;
#if defined(__CUDA_ARCH_FEAT_SM100_ALL)
  using kernels::CvtRsForm;
  // Memory element 0 is the last operand (f, or b).
  if constexpr (F == CvtRsForm::f16x2)
    asm("cvt.rs.satfinite.f16x2.f32 %0, %1, %2, %3;" : "=r"(d) : "f"(x[1]), "f"(x[0]), "r"(r));
  else if constexpr (F == CvtRsForm::bf16x2)
    asm("cvt.rs.satfinite.bf16x2.f32 %0, %1, %2, %3;" : "=r"(d) : "f"(x[1]), "f"(x[0]), "r"(r));
  else if constexpr (F == CvtRsForm::e4m3x4)
    asm("cvt.rs.satfinite.e4m3x4.f32 %0, {%1, %2, %3, %4}, %5;" : "=r"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(r));
  else if constexpr (F == CvtRsForm::e5m2x4)
    asm("cvt.rs.satfinite.e5m2x4.f32 %0, {%1, %2, %3, %4}, %5;" : "=r"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(r));
  else if constexpr (F == CvtRsForm::e2m3x4)
    asm("cvt.rs.satfinite.e2m3x4.f32 %0, {%1, %2, %3, %4}, %5;" : "=r"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(r));
  else if constexpr (F == CvtRsForm::e3m2x4)
    asm("cvt.rs.satfinite.e3m2x4.f32 %0, {%1, %2, %3, %4}, %5;" : "=r"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(r));
  else {
    unsigned short h;
    asm("cvt.rs.satfinite.e2m1x4.f32 %0, {%1, %2, %3, %4}, %5;" : "=h"(h) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(r));
    d = h;
  }
#else
  (void)x, (void)r;
#endif
  return d;
}

template <kernels::CvtRsForm F>
__global__ void cvt_rs_kernel(const float* x, const std::uint32_t* rbits, int groups, std::uint32_t* model,
                              std::uint32_t* hw, kernels::RbitsLayout layout) {
  constexpr int lanes = kernels::CvtRsFormTraits<F>::lanes;
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  model[g] = kernels::cvt_rs_packed<F>(x + lanes * g, rbits[g], layout);
  hw[g] = cvt_rs_instruction<F>(x + lanes * g, rbits[g]);
}

struct CvtRsResult {
  int model_differs = 0, hw_differs = 0, hw_ran = 0;
  std::string first;
};

template <kernels::CvtRsForm F>
CvtRsResult cvt_rs_on_device() {
  using Tr = kernels::CvtRsFormTraits<F>;
  // Inputs: every binade around the format's range, random fractions and
  // signs, specials; rbits from Philox.
  std::vector<float> x;
  std::uint64_t st = 99;
  for (int e = -30; e <= 20; ++e)
    for (int j = 0; j < 64; ++j) {
      st = kernels::splitmix64(st);
      const float v = std::ldexp(1.0f + static_cast<float>(st >> 40) * 0x1p-24f, e);
      x.push_back((st & 1) != 0 ? -v : v);
    }
  for (float v : {0.0f, -0.0f, __builtin_inff(), -__builtin_inff(), __builtin_nanf("")}) x.push_back(v);
  while (x.size() % Tr::lanes != 0) x.push_back(1.0f);
  const int groups = static_cast<int>(x.size()) / Tr::lanes;
  std::vector<std::uint32_t> r(groups), model(groups), hw(groups);
  for (int g = 0; g < groups; ++g) r[g] = kernels::philox_bits(7, 0, static_cast<std::uint64_t>(g));
  float* dx = nullptr;
  std::uint32_t *dr = nullptr, *dm = nullptr, *dh = nullptr;
  CvtRsResult res;
  if (cudaMalloc(&dx, x.size() * 4) != cudaSuccess || cudaMalloc(&dr, r.size() * 4) != cudaSuccess ||
      cudaMalloc(&dm, r.size() * 4) != cudaSuccess || cudaMalloc(&dh, r.size() * 4) != cudaSuccess) {
    res.first = "cudaMalloc failed";
    res.model_differs = -1;
    return res;
  }
  cudaMemcpy(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dr, r.data(), r.size() * 4, cudaMemcpyHostToDevice);
  cvt_rs_kernel<F><<<(groups + 127) / 128, 128>>>(dx, dr, groups, dm, dh, kernels::kRbitsSm100a);
  const bool ran = cudaDeviceSynchronize() == cudaSuccess;
  cudaMemcpy(model.data(), dm, r.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(hw.data(), dh, r.size() * 4, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dr);
  cudaFree(dm);
  cudaFree(dh);
  if (!ran) {
    res.model_differs = -1;
    res.first = "the kernel did not run";
    return res;
  }
  for (int g = 0; g < groups; ++g) {
    const std::uint32_t host = kernels::cvt_rs_packed<F>(&x[Tr::lanes * g], r[g], kernels::kRbitsSm100a);
    res.model_differs += model[g] != host;
    if (hw[g] == 0xFFFF'FFFFu) continue;
    ++res.hw_ran;
    if (hw[g] != host && res.hw_differs++ == 0)
      res.first = std::string(enum_name(F)) + " group " + std::to_string(g) + ": hardware " + std::to_string(hw[g]) +
                  ", model " + std::to_string(host);
  }
  return res;
}

TEST(Device, cvt_rs_model_and_instruction) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device: device code compiled, not run";
  int hw_ran = 0;
  std::string hw_report;
  auto one = [&](auto form) {
    const CvtRsResult r = cvt_rs_on_device<decltype(form)::value>();
    EXPECT_EQ(r.model_differs, 0) << enum_name(decltype(form)::value) << ": the model differs on the device " << r.first;
    hw_ran += r.hw_ran;
    if (r.hw_ran > 0) EXPECT_EQ(r.hw_differs, 0) << r.first;
  };
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::f16x2>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::bf16x2>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::e4m3x4>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::e5m2x4>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::e2m3x4>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::e3m2x4>{});
  one(std::integral_constant<kernels::CvtRsForm, kernels::CvtRsForm::e2m1x4>{});
  if (hw_ran == 0) GTEST_SKIP() << "cvt.rs runs on sm_100a (B200) only: the model ran on this GPU, the instruction did not";
}

}  // namespace
