// The CUDA backend (lplab/cuda.h) against the CPU kernels, one test body for
// both: each test computes with lplab::kernels and with lplab::cuda on the
// same inputs and requires the same bits -- conversions (every catalog
// format and policy), block scaling (every scheme), elementwise ops on
// strided views, matmul under the emulated accumulators -- and checks values
// a wrong implementation would get wrong. cuBLASLt, the native baseline,
// is held to the exact product within its documented error. Without a GPU
// each test reports SKIPPED, saying so; the argument checks, which come
// before any device work, run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lplab/cuda.h"
#include "lplab/formats.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scaling.h"

namespace {

using namespace lplab;

bool have_device() { return !lplab::cuda::devices().empty(); }
#define LPLAB_NEED_GPU() \
  if (!have_device()) GTEST_SKIP() << "no CUDA device: the CUDA backend compiled, not run"

template <class T>
auto bits_of(const T& x) {
  if constexpr (std::is_same_v<T, float>) return detail::bit_cast<std::uint32_t>(x);
  else if constexpr (std::is_same_v<T, double>) return detail::bit_cast<std::uint64_t>(x);
  else return x.bits();
}

template <class T>
std::size_t count_differ(const std::vector<T>& a, const std::vector<T>& b) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) bad += bits_of(a[i]) != bits_of(b[i]);
  return bad;
}

// 2^20 float bit patterns, i * 4099 for i < 2^20 (4099 is odd, so they are
// spread over the whole 32-bit range, both signs, NaNs and infinities).
std::vector<float> spread_floats() {
  std::vector<float> x(1 << 20);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = detail::bit_cast<float>(static_cast<std::uint32_t>(i) * 4099u);
  return x;
}

// Values like a layer's activations: normal-ish with outliers, every few
// blocks a zero block, an infinity or a NaN.
std::vector<float> activations(std::size_t n, std::uint64_t seed, bool specials) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = kernels::splitmix64(seed + i);
    const double u = static_cast<double>(r >> 11) * 0x1p-53 * 2.0 - 1.0;
    const int e = static_cast<int>((r >> 3) % 24) - 12;
    x[i] = static_cast<float>(std::ldexp(u, e));
  }
  if (specials && n > 700) {
    for (std::size_t i = 64; i < 96; ++i) x[i] = 0.0f;
    x[130] = INFINITY;
    x[300] = -INFINITY;
    x[611] = NAN;
  }
  return x;
}

// ---------------------------------------------------------------------------
// Conversions: every catalog format, every rounding and overflow policy
// (stochastic with a seed and an index base), and every code of each format
// of 16 bits or fewer decoded.

using Catalog = catalog_tuple;
#define LPLAB_TEST_NAME(type, names, description) #type,
constexpr const char* kCatalogNames[] = {LPLAB_FORMAT_CATALOG(LPLAB_TEST_NAME)};
#undef LPLAB_TEST_NAME

template <class T>
std::string convert_differs(const char* name, const std::vector<float>& x) {
  std::string out;
  for (const Round r : kRounds)
    for (const Overflow o : kOverflows) {
      const kernels::ConvertOptions options{.round = r, .overflow = o, .seed = 12345, .first_index = 77};
      std::vector<T> cpu(x.size()), gpu(x.size());
      kernels::convert(std::span<const float>(x), std::span<T>(cpu), options);
      lplab::cuda::convert(std::span<const float>(x), std::span<T>(gpu), options);
      if (const std::size_t bad = count_differ(cpu, gpu))
        out += std::string(name) + " " + round_name(r) + " " + overflow_name(o) +
               (lplab::cuda::hardware_conversion<T>(options) ? " (cvt)" : "") + ": " + std::to_string(bad) + "; ";
    }
  if constexpr (finfo<T>::bits <= 16) {
    const std::size_t codes = std::size_t{1} << finfo<T>::bits;
    std::vector<T> all(codes);
    for (std::size_t c = 0; c < codes; ++c) all[c] = T::from_bits(static_cast<typename T::storage_type>(c));
    std::vector<float> cpu(codes), gpu(codes);
    kernels::convert(std::span<const T>(all), std::span<float>(cpu));
    lplab::cuda::convert(std::span<const T>(all), std::span<float>(gpu));
    if (const std::size_t bad = count_differ(cpu, gpu)) out += std::string(name) + " decode: " + std::to_string(bad) + "; ";
  }
  return out;
}

template <std::size_t... I>
std::string every_format_differs(std::index_sequence<I...>) {
  const std::vector<float> x = spread_floats();
  return (convert_differs<std::tuple_element_t<I, Catalog>>(kCatalogNames[I], x) + ...);
}

TEST(Backend, converts_every_format_and_policy_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  EXPECT_EQ(every_format_differs(std::make_index_sequence<lplab::float_format_count>{}), "");
  // Values a wrong conversion gets wrong: ties to even, saturation, overflow.
  const std::vector<float> x = {1.00390625f, 1.01171875f, 500.0f, 65520.0f, -0.0f};
  std::vector<bfloat16> b(x.size());
  lplab::cuda::convert(std::span<const float>(x), std::span<bfloat16>(b));
  EXPECT_EQ(b[0].bits(), 0x3F80);  // 1 + 2^-8: the tie goes to even, 1.0
  EXPECT_EQ(b[1].bits(), 0x3F82);  // 1 + 3 * 2^-8: the tie goes up
  std::vector<float8_e4m3fn> e(x.size());
  lplab::cuda::convert(std::span<const float>(x), std::span<float8_e4m3fn>(e), {.overflow = Overflow::saturate});
  EXPECT_EQ(static_cast<float>(e[2]), 448.0f);
  std::vector<float16> h(x.size());
  lplab::cuda::convert(std::span<const float>(x), std::span<float16>(h));
  EXPECT_TRUE(std::isinf(static_cast<float>(h[3])));  // 65520 rounds up past 65504
  EXPECT_EQ(h[4].bits(), 0x8000);
}

// The device's own memory: Buffers in, Buffers out, an unaligned view.
TEST(Backend, converts_device_memory_in_place) {
  LPLAB_NEED_GPU();
  const std::vector<float> x = activations(4099, 5, true);
  const lplab::cuda::Buffer<float> dx(x);
  lplab::cuda::Buffer<float8_e5m2> dy(x.size());
  lplab::cuda::convert(lplab::cuda::DeviceSpan<const float>(dx.span()), dy.span(),
                       {.overflow = Overflow::saturate});
  std::vector<float8_e5m2> cpu(x.size());
  kernels::convert(std::span<const float>(x), std::span<float8_e5m2>(cpu), {.overflow = Overflow::saturate});
  EXPECT_EQ(count_differ(cpu, dy.to_host()), 0u);
  // From the third element on: not 16-byte aligned, the element-wise path.
  lplab::cuda::Buffer<bfloat16> dz(x.size() - 3);
  lplab::cuda::convert(lplab::cuda::DeviceSpan<const float>{dx.data() + 3, x.size() - 3}, dz.span());
  std::vector<bfloat16> z(x.size() - 3);
  kernels::convert(std::span<const float>(x).subspan(3), std::span<bfloat16>(z));
  EXPECT_EQ(count_differ(z, dz.to_host()), 0u);
}

// ---------------------------------------------------------------------------
// Block scaling: every named scheme, the ceil rule, a block size that does
// not divide n, blocks holding zeros, an infinity and a NaN.

template <class Elem, class Scale>
void expect_same_quantization(const kernels::BlockScaling<Elem, Scale>& s, const char* name,
                              const std::vector<float>& x) {
  SCOPED_TRACE(name);
  const std::size_t nb = kernels::scales_needed(s, x.size());
  std::vector<Elem> qc(x.size()), qg(x.size());
  std::vector<Scale> sc(nb), sg(nb);
  float tc = -1.0f, tg = -2.0f;
  kernels::quantize(s, std::span<const float>(x), std::span<Elem>(qc), std::span<Scale>(sc), &tc);
  lplab::cuda::quantize(s, std::span<const float>(x), std::span<Elem>(qg), std::span<Scale>(sg), &tg);
  EXPECT_EQ(count_differ(qc, qg), 0u);
  EXPECT_EQ(count_differ(sc, sg), 0u);
  if (s.tensor_scale) EXPECT_EQ(bits_of(tc), bits_of(tg));
  std::vector<float> yc(x.size()), yg(x.size());
  kernels::dequantize(s, std::span<const Elem>(qc), std::span<const Scale>(sc), std::span<float>(yc), tc);
  lplab::cuda::dequantize(s, std::span<const Elem>(qc), std::span<const Scale>(sc), std::span<float>(yg), tc);
  EXPECT_EQ(count_differ(yc, yg), 0u);
}

TEST(Backend, quantizes_every_block_scheme_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  for (const bool specials : {false, true}) {
    const std::vector<float> x = activations(100'003, specials ? 7 : 8, specials);
    expect_same_quantization(kernels::mxfp8_e4m3, "mxfp8_e4m3", x);
    expect_same_quantization(kernels::mxfp8_e5m2, "mxfp8_e5m2", x);
    expect_same_quantization(kernels::mxfp6_e2m3, "mxfp6_e2m3", x);
    expect_same_quantization(kernels::mxfp6_e3m2, "mxfp6_e3m2", x);
    expect_same_quantization(kernels::mxfp4, "mxfp4", x);
    expect_same_quantization(kernels::nvfp4, "nvfp4", x);
    expect_same_quantization(kernels::nvfp4_te, "nvfp4_te", x);
    auto ceil = kernels::mxfp8_e4m3;
    ceil.rule = kernels::ScaleRule::ceil;
    expect_same_quantization(ceil, "mxfp8_e4m3 ceil", x);
    auto odd = kernels::BlockScaling<float8_e4m3fnuz, float8_e8m0fnu>{};
    odd.block_size = 7;
    expect_same_quantization(odd, "e4m3fnuz blocks of 7", x);
  }
  // OCP MX's floor rule on amax 500: scale 2^0, 500 saturates to 448.
  const std::vector<float> x = {500.0f, 1.0f};
  std::vector<float8_e4m3fn> q(2);
  std::vector<float8_e8m0fnu> sc(1);
  lplab::cuda::quantize(kernels::mxfp8_e4m3, std::span<const float>(x), std::span<float8_e4m3fn>(q),
                        std::span<float8_e8m0fnu>(sc));
  EXPECT_EQ(static_cast<float>(sc[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(q[0]), 448.0f);
}

// Per-tensor scaling: current amax, an amax history (max and most recent),
// and a margin; the scale and amax returned, the elements, the dequantized values.
TEST(Backend, quantizes_per_tensor_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  const std::vector<float> x = activations(70'001, 9, false);
  const std::vector<float> history = {3.0f, 1500.0f, 0.25f};
  for (const kernels::AmaxSource source :
       {kernels::AmaxSource::current, kernels::AmaxSource::history_max, kernels::AmaxSource::history_most_recent}) {
    const kernels::TensorScaling<float8_e4m3fn> s{.margin = 1, .amax = source};
    std::vector<float8_e4m3fn> qc(x.size()), qg(x.size());
    const kernels::TensorScaleResult rc = kernels::quantize(s, std::span<const float>(x), std::span<float8_e4m3fn>(qc),
                                                            std::span<const float>(history));
    const kernels::TensorScaleResult rg = lplab::cuda::quantize(s, std::span<const float>(x),
                                                                std::span<float8_e4m3fn>(qg), std::span<const float>(history));
    EXPECT_EQ(bits_of(rc.scale), bits_of(rg.scale));
    EXPECT_EQ(bits_of(rc.amax), bits_of(rg.amax));
    EXPECT_EQ(count_differ(qc, qg), 0u);
    std::vector<float> yc(x.size()), yg(x.size());
    kernels::dequantize(s, std::span<const float8_e4m3fn>(qc), rc.scale, std::span<float>(yc));
    lplab::cuda::dequantize(s, std::span<const float8_e4m3fn>(qc), rc.scale, std::span<float>(yg));
    EXPECT_EQ(count_differ(yc, yg), 0u);
  }
  // TE's formula: scale = (448 / amax) / 2^margin; amax 1500 with margin 1 gives 448 / 3000.
  std::vector<float8_e4m3fn> q(x.size());
  const kernels::TensorScaleResult r = lplab::cuda::quantize(
      kernels::TensorScaling<float8_e4m3fn>{.margin = 1, .amax = kernels::AmaxSource::history_max},
      std::span<const float>(x), std::span<float8_e4m3fn>(q), std::span<const float>(history));
  EXPECT_EQ(r.scale, (448.0f / 1500.0f) / 2.0f);
}

// ---------------------------------------------------------------------------
// Elementwise ops on strided views: the correctly rounded ops bit for bit
// (NaN results compared as NaN: CUDA's arithmetic returns its canonical
// NaN); gelu and pow, which call CUDA's libm, within one code of the output
// format.

template <class T>
double value_of(const T& x) {
  if constexpr (std::is_same_v<T, float>) return x;
  else return static_cast<double>(static_cast<float>(x));
}

template <class T>
std::size_t count_apart(const std::vector<T>& a, const std::vector<T>& b, long long codes) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(value_of(a[i])) && std::isnan(value_of(b[i]))) continue;
    const long long d = static_cast<long long>(bits_of(a[i])) - static_cast<long long>(bits_of(b[i]));
    bad += d > codes || -d > codes;
  }
  return bad;
}

template <class X, class Y>
void expect_same_map(std::initializer_list<kernels::Step> chain, const kernels::ElementwiseOptions& o,
                     long long codes) {
  SCOPED_TRACE(std::string(kCatalogNames[static_cast<int>(kernels::format_id<X>)]) + " -> " +
               kCatalogNames[static_cast<int>(kernels::format_id<Y>)] + ", first step " +
               (chain.size() ? kernels::unary_name(chain.begin()->op) : "cast"));
  const std::vector<float> v = activations(96 * 130, 11, true);
  std::vector<X> xs(v.size());
  kernels::convert(std::span<const float>(v), std::span<X>(xs), {.overflow = Overflow::saturate});
  // x: 96 x 130 read transposed (130 x 96, strides {1, 130}); y: every
  // other column of a 130 x 192 array, the rest of which must stay as it was.
  const kernels::View<const X> x = kernels::View<const X>(xs.data(), {96, 130}).transpose(0, 1);
  std::vector<Y> yc(130 * 192, Y(3.0f)), yg = yc;
  const auto out = [](std::vector<Y>& y) {
    const std::size_t shape[] = {130, 96};
    const std::ptrdiff_t strides[] = {192, 2};
    return kernels::View<Y>(y.data(), kernels::Layout(shape, strides));
  };
  const std::vector<kernels::Step> steps(chain);
  kernels::map(std::span<const kernels::Step>(steps), x, out(yc), o);
  lplab::cuda::map(std::span<const kernels::Step>(steps), x, out(yg), o);
  if (codes == 0) {
    EXPECT_EQ(count_apart(yc, yg, 0), 0u) << "compute " << static_cast<int>(o.compute) << ", round "
                                          << round_name(o.round);
    return;
  }
  // The libm ops: one code apart, or -- where gelu's 1 + tanh / 1 + erf
  // cancels (x far below 0, y tiny beside x) and amplifies the libraries'
  // last-bit differences -- within 2^-20 |x|.
  std::size_t bad = 0;
  for (std::size_t i = 0; i < 130; ++i)
    for (std::size_t j = 0; j < 96; ++j) {
      const std::size_t q = i * 192 + 2 * j;
      const double xv = value_of(xs[j * 130 + i]), c = value_of(yc[q]), g = value_of(yg[q]);
      if ((std::isnan(c) && std::isnan(g)) || c == g) continue;
      const long long d = static_cast<long long>(bits_of(yc[q])) - static_cast<long long>(bits_of(yg[q]));
      bad += (d > codes || -d > codes) && !(std::fabs(c - g) <= 0x1p-20 * std::fabs(xv));
    }
  EXPECT_EQ(bad, 0u) << "compute " << static_cast<int>(o.compute) << ", round " << round_name(o.round);
}

TEST(Backend, maps_strided_views_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  using kernels::Compute;
  using kernels::Step;
  using kernels::Unary;
  const std::initializer_list<Step> exact = {{Unary::square}, {Unary::sqrt}, {Unary::relu},
                                             {Unary::scale, 0.37f}, {Unary::rsqrt}};
  for (const Compute c : {Compute::per_op, Compute::fused, Compute::fp64})
    for (const Round r : {Round::nearest_even, Round::toward_zero, Round::stochastic}) {
      const kernels::ElementwiseOptions o{.compute = c, .round = r, .seed = 99};
      expect_same_map<bfloat16, bfloat16>(exact, o, 0);
      expect_same_map<float8_e4m3fn, float>(exact, o, 0);
      expect_same_map<float, float16>(exact, o, 0);
      expect_same_map<float16, float8_e5m2>({}, o, 0);  // a cast
      expect_same_map<float8_e5m2, float8_e4m3fn>(exact, o, 0);
      expect_same_map<float8_e4m3fnuz, bfloat16>(exact, o, 0);  // the general path
      // CUDA's tanh, erf and pow against the CPU's, one op at a time: the
      // results differ in float's (or double's) last bits.
      expect_same_map<bfloat16, bfloat16>({{Unary::gelu_tanh}}, o, 1);
      expect_same_map<bfloat16, bfloat16>({{Unary::gelu_erf}}, o, 1);
      expect_same_map<bfloat16, bfloat16>({{Unary::pow, 1.5f}}, o, 1);
    }
}

// Device memory in place (Memory::device), the fast path's formats.
TEST(Backend, maps_device_memory_in_place) {
  LPLAB_NEED_GPU();
  const std::vector<float> v = activations(1 << 16, 12, true);
  std::vector<bfloat16> x(v.size()), yc(v.size());
  kernels::convert(std::span<const float>(v), std::span<bfloat16>(x));
  const kernels::Step chain[] = {{kernels::Unary::square}, {kernels::Unary::sqrt}, {kernels::Unary::relu}};
  const kernels::View<const bfloat16> xv(x.data(), {256, 256});
  kernels::map(std::span<const kernels::Step>(chain), xv, kernels::View<bfloat16>(yc.data(), {256, 256}));
  const lplab::cuda::Buffer<bfloat16> dx(x);
  lplab::cuda::Buffer<bfloat16> dy(x.size());
  const kernels::Layout l({256, 256});
  lplab::cuda::map_unary(chain, {kernels::FormatId::bfloat16, dx.data(), l},
                         {kernels::FormatId::bfloat16, dy.data(), l}, {}, lplab::cuda::Memory::device);
  EXPECT_EQ(count_apart(yc, dy.to_host(), 0), 0u);
}

TEST(Backend, binary_ops_on_strided_views_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  const std::vector<float> va = activations(64 * 48, 3, true), vb = activations(64 * 48, 4, false);
  std::vector<bfloat16> a(va.size());
  kernels::convert(std::span<const float>(va), std::span<bfloat16>(a));
  const kernels::View<const bfloat16> av(a.data(), {64, 48});
  const kernels::View<const float> bv = kernels::View<const float>(vb.data(), {48, 64}).transpose(0, 1);
  for (const kernels::Binary op : {kernels::Binary::add, kernels::Binary::mul, kernels::Binary::axpy})
    for (const kernels::Compute c : {kernels::Compute::per_op, kernels::Compute::fp64}) {
      // bf16 + float -> bf16: the fast path's formats.
      std::vector<bfloat16> zc(64 * 48), zg(64 * 48);
      const kernels::View<bfloat16> zcv(zc.data(), {64, 48}), zgv(zg.data(), {64, 48});
      kernels::map_binary(op, 1.75f, kernels::operand(av), kernels::operand(bv),
                                  kernels::output(zcv), {.compute = c});
      lplab::cuda::binary(op, 1.75f, av, bv, zgv, {.compute = c});
      EXPECT_EQ(count_apart(zc, zg, 0), 0u) << kernels::binary_name(op);
      std::vector<float8_e4m3fn> yc(64 * 48), yg(64 * 48);
      const kernels::View<float8_e4m3fn> ycv(yc.data(), {64, 48}), ygv(yg.data(), {64, 48});
      const kernels::ElementwiseOptions o{.compute = c, .overflow = Overflow::saturate};
      kernels::map_binary(op, 1.75f, kernels::operand(av), kernels::operand(bv),
                                  kernels::output(ycv), o);
      lplab::cuda::binary(op, 1.75f, av, bv, ygv, o);
      EXPECT_EQ(count_apart(yc, yg, 0), 0u) << kernels::binary_name(op);
    }
}

// ---------------------------------------------------------------------------
// Matmul under the emulated accumulators.

template <class T>
std::vector<T> operand(std::size_t n, std::uint64_t seed) {
  const std::vector<float> v = activations(n, seed, false);
  std::vector<T> out(n);
  kernels::convert(std::span<const float>(v), std::span<T>(out), {.overflow = Overflow::saturate});
  return out;
}

template <class TA, class TB>
void expect_same_matmul(const kernels::MatmulOptions& o, std::size_t m, std::size_t n, std::size_t k, const char* what) {
  SCOPED_TRACE(what);
  const std::vector<TA> a = operand<TA>(m * k, 21);
  const std::vector<TB> b = operand<TB>(k * n, 22);
  std::vector<float> cc(m * n), cg(m * n);
  kernels::matmul(m, n, k, a.data(), b.data(), cc.data(), o);
  lplab::cuda::matmul(m, n, k, a.data(), b.data(), cg.data(), o);
  EXPECT_EQ(count_differ(cc, cg), 0u);
}

TEST(Backend, matmul_under_every_emulated_accumulator_as_the_cpu_kernels) {
  LPLAB_NEED_GPU();
  namespace acc = kernels::accumulators;
  expect_same_matmul<float8_e4m3fn, float8_e4m3fn>({.accumulator = acc::hopper_wgmma_fp8}, 33, 40, 300, "hopper fp8");
  expect_same_matmul<float8_e4m3fn, float8_e5m2>(
      {.accumulator = kernels::AccumulatorModel(acc::hopper_wgmma_fp8).promoted_every(128)}, 17, 24, 512,
      "DeepSeek-V3 promotion");
  expect_same_matmul<bfloat16, bfloat16>({.accumulator = kernels::Accumulator::tensor_core}, 20, 30, 200, "tensor core");
  expect_same_matmul<bfloat16, bfloat16>({.accumulator = kernels::Accumulator::fp16}, 20, 30, 200, "fp16 chain");
  expect_same_matmul<float16, float16>({.accumulator = kernels::Accumulator::bf16}, 20, 30, 200, "bf16 chain");
  for (const char* name : {"hopper.wgmma.f32.e4m3.e5m2", "ampere.mma.m16n8k16.f32.bf16.bf16.f32",
                           "volta.mma.m8n8k4.f32.f16.f16.f32", "cdna3.mfma.f32_32x32x8_bf16",
                           "blackwell.tcgen05.f8f6f4.f32.e4m3.e2m1", "hopper.wgmma.f16.e4m3.e4m3"}) {
    const kernels::MmaInstruction* i = kernels::find_mma_instruction(name);
    ASSERT_NE(i, nullptr) << name;
    kernels::MatmulOptions o;
    o.accumulator.kind = kernels::Accumulator::instruction;
    o.accumulator.instruction = static_cast<int>(i - kernels::mma_instructions().data());
    const std::string a(kernels::mma_format_name(i->a)), b(kernels::mma_format_name(i->b));
    if (a == "float8_e4m3fn" && b == "float8_e5m2") expect_same_matmul<float8_e4m3fn, float8_e5m2>(o, 16, 24, 96, name);
    else if (a == "float8_e4m3fn" && b == "float8_e4m3fn") expect_same_matmul<float8_e4m3fn, float8_e4m3fn>(o, 16, 24, 96, name);
    else if (a == "float8_e4m3fn") expect_same_matmul<float8_e4m3fn, float4_e2m1fn>(o, 16, 24, 96, name);
    else if (a == "bfloat16") expect_same_matmul<bfloat16, bfloat16>(o, 16, 24, 96, name);
    else expect_same_matmul<float16, float16>(o, 16, 24, 96, name);
  }
  // fp16 swamping: 4096 ones summed in fp16 stop at 2048.
  const std::vector<float16> ones(4096, float16(1.0f));
  float c = 0;
  lplab::cuda::matmul(1, 1, 4096, ones.data(), ones.data(), &c, {.accumulator = kernels::Accumulator::fp16});
  EXPECT_EQ(c, 2048.0f);
}

// cuBLASLt against the exact product (kernels' fp64 accumulator), within
// the error bound of its accumulator whatever its summation order: fp32 and
// the 16-bit types' exact products summed in fp32, |error| <= k u / (1 - k u)
// sum |a b| with u = 2^-23 (truncating adders included); FP8 on Hopper, whose
// tensor cores keep 13 fraction bits below a block's largest term (lplab's
// hopper_wgmma_fp8 model), within 2^-7 sum |a b|. The largest error seen,
// relative to sum |a b|, is printed.
template <class T, class TC>
void expect_cublas_close(std::size_t m, std::size_t n, std::size_t k, double tolerance, const char* what) {
  SCOPED_TRACE(what);
  const std::vector<T> a = operand<T>(m * k, 31), b = operand<T>(k * n, 32);
  std::vector<T> bt(n * k);
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t j = 0; j < n; ++j) bt[j * k + t] = b[t * n + j];
  std::vector<double> exact(m * n), bound(m * n, 0.0);
  const std::vector<float> fa = kernels::decode_operand(a.data(), m * k), fb = kernels::decode_operand(b.data(), k * n);
  kernels::matmul_sums({m, n, k, fa.data(), fb.data(), kernels::operand_range<T>(), kernels::operand_range<T>()},
                       exact.data(), {.accumulator = kernels::Accumulator::fp64});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t t = 0; t < k; ++t) bound[i * n + j] += std::fabs(double(fa[i * k + t]) * fb[t * n + j]);
  const lplab::cuda::Buffer<T> da(a), db(bt);
  lplab::cuda::Buffer<TC> dc(m * n);
  lplab::cuda::cublas_matmul<T, T, TC>(m, n, k, da.span(), db.span(), dc.span());
  const std::vector<TC> c = dc.to_host();
  std::size_t bad = 0;
  double worst = 0;
  for (std::size_t q = 0; q < m * n; ++q) {
    const double err = std::fabs(value_of(c[q]) - exact[q]);
    bad += err > tolerance * bound[q];
    if (bound[q] > 0) worst = std::max(worst, err / bound[q]);
  }
  std::printf("cuBLASLt %s, k = %zu: largest |error| / sum |a b| = %.3g (bound %.3g)\n", what, k, worst, tolerance);
  EXPECT_EQ(bad, 0u);
}

TEST(Backend, cublas_baseline_is_the_product_within_its_precision) {
  LPLAB_NEED_GPU();
  const std::size_t k = 256;
  const double fp32 = k * 0x1p-23 / (1 - k * 0x1p-23);
  expect_cublas_close<float, float>(64, 48, k, fp32, "fp32");
  expect_cublas_close<bfloat16, float>(64, 48, k, fp32, "bf16");
  expect_cublas_close<float16, float>(64, 48, k, fp32, "fp16");
  expect_cublas_close<float8_e4m3fn, float>(64, 48, k, 0x1p-7, "e4m3");
}

// ---------------------------------------------------------------------------
// What runs without a GPU: the argument checks come first, and without a
// device every call says why instead of writing anything.

TEST(Backend, refuses_bad_calls_before_any_device_work) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f};
  std::vector<float16> y(2, float16(7.0f));
  EXPECT_THROW(lplab::cuda::convert(std::span<const float>(x), std::span<float16>(y)), std::invalid_argument);
  y.resize(3, float16(7.0f));
  kernels::FlagCounts stats;
  EXPECT_THROW(lplab::cuda::convert(std::span<const float>(x), std::span<float16>(y),
                                    kernels::ConvertOptions{.stats = &stats}),
               std::invalid_argument);
  std::vector<float8_e4m3fn> q(3);
  std::vector<float8_e8m0fnu> sc(2);  // needs 1
  EXPECT_THROW(lplab::cuda::quantize(kernels::mxfp8_e4m3, std::span<const float>(x), std::span<float8_e4m3fn>(q),
                                     std::span<float8_e8m0fnu>(sc)),
               std::invalid_argument);
  std::vector<float> c(1);
  try {
    lplab::cuda::matmul(1, 1, 3, x.data(), x.data(), c.data(), {.accumulator = kernels::Accumulator::fp32});
    ADD_FAILURE() << "fp32 on the device";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("runs on the CPU"), std::string::npos) << e.what();
  }
  const kernels::View<const float> xv(x.data(), {3});
  std::vector<bfloat16> out(2);
  EXPECT_THROW(lplab::cuda::map(std::span<const kernels::Step>(), xv, kernels::View<bfloat16>(out.data(), {2})),
               std::invalid_argument);
}

// The backends share their checks (lplab/kernels/plans.h): a bad call gets
// the CPU's message, word for word, from either.
std::string message_of(auto&& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no std::invalid_argument";
}

TEST(Backend, refuses_bad_calls_in_the_cpu_words) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f};
  std::vector<float16> y(2);
  EXPECT_EQ(message_of([&] { lplab::cuda::convert(std::span<const float>(x), std::span<float16>(y)); }),
            message_of([&] { kernels::convert(std::span<const float>(x), std::span<float16>(y)); }));
  std::vector<float8_e4m3fn> q(3), short_q(2);
  std::vector<float8_e8m0fnu> sc(2);  // needs 1
  std::vector<float8_e4m3fn> nv_sc(1);
  float ts = 0.0f;
  const auto scheme_messages = [&](const auto& s, auto& scales, float* tensor_scale) {
    EXPECT_EQ(message_of([&] { lplab::cuda::quantize(s, std::span<const float>(x), std::span(q), std::span(scales),
                                                     tensor_scale); }),
              message_of([&] { kernels::quantize(s, std::span<const float>(x), std::span(q), std::span(scales),
                                                 tensor_scale); }));
  };
  scheme_messages(kernels::mxfp8_e4m3, sc, nullptr);  // two scales for one block
  auto no_block = kernels::mxfp8_e4m3;
  no_block.block_size = 0;
  scheme_messages(no_block, sc, nullptr);
  const kernels::BlockScaling<float8_e4m3fn, float8_e4m3fn> te{.rule = kernels::ScaleRule::amax_ratio_te};
  scheme_messages(te, nv_sc, &ts);  // amax_ratio_te without the tensor scale
  const kernels::BlockScaling<float8_e4m3fn, float8_e4m3fn> nv{.rule = kernels::ScaleRule::amax_ratio,
                                                                .tensor_scale = true};
  scheme_messages(nv, nv_sc, nullptr);  // no output for the tensor scale
  const std::string dequantize = message_of([&] {
    std::vector<float> out(2);
    lplab::cuda::dequantize(kernels::mxfp8_e4m3, std::span<const float8_e4m3fn>(q),
                            std::span<const float8_e8m0fnu>(sc.data(), 1), std::span(out));
  });
  EXPECT_EQ(dequantize, "lplab::kernels::dequantize: y has 2 elements, expected 3");
  const kernels::TensorScaling<float8_e4m3fn> delayed{.amax = kernels::AmaxSource::history_max};
  EXPECT_EQ(message_of([&] { lplab::cuda::quantize(delayed, std::span<const float>(x), std::span(q)); }),
            message_of([&] { kernels::quantize(delayed, std::span<const float>(x), std::span(q)); }));
  EXPECT_EQ(message_of([&] { lplab::cuda::quantize(kernels::fp8_e4m3_tensor, std::span<const float>(x),
                                                   std::span(short_q)); }),
            message_of([&] { kernels::quantize(kernels::fp8_e4m3_tensor, std::span<const float>(x),
                                               std::span(short_q)); }));
  // An operand value the instruction's type does not hold (0.3 is no e4m3).
  const std::vector<float> a(32, 0.3f), b(32, 1.0f);
  std::vector<float> c(1);
  const kernels::MatmulOptions o{.accumulator = kernels::instruction_accumulator("hopper.wgmma.f32.e4m3.e4m3")};
  const kernels::MatmulProblem p{1, 1, 32, a.data(), b.data(), kernels::operand_range<float8_e4m3fn>(),
                                 kernels::operand_range<float8_e4m3fn>()};
  const std::string cpu = message_of([&] { kernels::matmul(p, c.data(), o); });
  EXPECT_NE(cpu.find("A[0][0] = 0.300000 is not a value of e4m3"), std::string::npos) << cpu;
  EXPECT_EQ(message_of([&] { lplab::cuda::matmul(p, c.data(), o); }), cpu);
}

TEST(Backend, says_why_when_there_is_no_device) {
  if (have_device()) GTEST_SKIP() << "a CUDA device is present: the no-device path is not taken";
  std::string why;
  EXPECT_TRUE(lplab::cuda::devices(&why).empty());
  EXPECT_FALSE(why.empty());
  std::vector<float> x = {1.0f, 2.0f, 3.0f};
  std::vector<float16> y(3, float16(7.0f));
  try {
    lplab::cuda::convert(std::span<const float>(x), std::span<float16>(y));
    ADD_FAILURE() << "converted without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "lplab::cuda: no CUDA device: " + why);
  }
  for (const float16& v : y) EXPECT_EQ(v.bits(), float16(7.0f).bits());  // nothing written
  EXPECT_THROW(lplab::cuda::Buffer<float>(4), std::runtime_error);
}

}  // namespace
