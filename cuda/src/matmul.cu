// Matmul on the device (lplab/cuda.h): the emulated accumulators, each
// output's chain on one thread through the portable core -- the
// tensor-core model (tensor_core_step.h), the fp16/bf16 chains
// (exact_sum.h), the matrix-unit instructions (mma_step.h) -- and cuBLASLt's
// GEMM, the native baseline.
#include <cublasLt.h>
#include <dlfcn.h>

#include <type_traits>

#include "common.cuh"
#include "lplab/kernels/exact_sum.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/plans.h"
#include "lplab/kernels/tensor_core_step.h"

#define LPLAB_STRINGIFY2(x) #x
#define LPLAB_STRINGIFY(x) LPLAB_STRINGIFY2(x)

namespace lplab::cuda {
namespace {

__global__ void tensor_core_kernel(kernels::TensorCoreModel model, const float* a, const float* b, std::size_t m,
                                   std::size_t n, std::size_t k, double* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < m * n; q += stride)
    out[q] = kernels::tensor_core::dot(model, a + (q / n) * k, b + q % n, n, k);
}

template <bool Bf16>  // (not the type: nvcc's host stubs cannot spell a format type)
__global__ void narrow_kernel(const float* a, const float* b, std::size_t m, std::size_t n, std::size_t k,
                              double* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < m * n; q += stride) {
    const float* row = a + (q / n) * k;
    const float* col = b + q % n;
    double acc = 0.0;
    for (std::size_t t = 0; t < k; ++t)
      acc = kernels::narrow_add<std::conditional_t<Bf16, bfloat16, float16>>(acc, static_cast<double>(row[t]) * static_cast<double>(col[t * n]));
    out[q] = acc;
  }
}

// a: m rows of kp doubles, bt: n rows of kp (B's columns), zero-padded to
// whole instructions; c: the first C of every output (nullptr: +0).
__global__ void instruction_kernel(kernels::MmaModel model, int promote_every, const double* a, const double* bt,
                                   const double* c, std::size_t m, std::size_t n, std::size_t kp, double* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t q = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < m * n; q += stride)
    out[q] = kernels::mma::chain(model, a + (q / n) * kp, bt + (q % n) * kp, kp, c ? c[q] : 0.0, nullptr, nullptr,
                                 promote_every, nullptr);
}

// One chain per output on the device, by the CPU's plan (plans.h: the
// instruction, k padded, B transposed).
void instruction_sums(const kernels::InstructionPlan& plan, const kernels::MatmulProblem& p,
                      const kernels::MatmulOptions& o, double* sums) {
  const Buffer<double> da(plan.padded_rows_of_a(p)), db(plan.padded_columns_of_b(p)), dout(p.m * p.n);
  Buffer<double> dc;
  if (o.c_input != nullptr) dc = Buffer<double>(std::span<const double>(o.c_input, p.m * p.n));
  instruction_kernel<<<detail::blocks_for(p.m * p.n), detail::kThreads>>>(
      plan.instruction->model, o.accumulator.promote_every, da.data(), db.data(), dc.data(), p.m, p.n, plan.k_padded,
      dout.data());
  detail::check_kernel("matmul");
  dout.download(std::span<double>(sums, p.m * p.n));
}

}  // namespace

namespace detail {

void matmul_sums(const kernels::MatmulProblem& p, const kernels::MatmulOptions& o, double* sums) {
  using kernels::Accumulator;
  const Accumulator kind = o.accumulator.kind;
  // What the device runs (the rest is the CPU's); the checks of what it
  // runs are the CPU's plans.
  if (kind != Accumulator::tensor_core && kind != Accumulator::fp16 && kind != Accumulator::bf16 &&
      kind != Accumulator::instruction)
    fail(std::string("matmul: the ") + kernels::accumulator_name(kind) +
         " accumulator runs on the CPU (lplab::kernels::matmul); the device emulates the tensor-core models, the "
         "fp16/bf16 chains and the matrix-unit instructions, and cublas_matmul is its native GEMM");
  if (kind == Accumulator::instruction) {
    const kernels::MmaInstruction& i =
        kernels::mma_instructions()[static_cast<std::size_t>(o.accumulator.instruction)];
    if (i.scale != kernels::MmaType::none)
      fail("matmul: " + i.name + " is block-scaled, and the device runs the instructions without block scales "
           "(lplab::kernels::matmul runs it on block-scaled operands)");
    const kernels::InstructionPlan plan = kernels::plan_instruction_matmul(p, o, false);
    require();
    return instruction_sums(plan, p, o, sums);
  }
  require();
  const std::size_t q = p.m * p.n;
  const Buffer<float> da(std::span<const float>(p.a, p.m * p.k)), db(std::span<const float>(p.b, p.k * p.n));
  const Buffer<double> dout(q);
  if (kind == Accumulator::tensor_core)
    tensor_core_kernel<<<blocks_for(q), kThreads>>>(kernels::tensor_core_model(p, o), da.data(), db.data(),
                                                    p.m, p.n, p.k, dout.data());
  else if (kind == Accumulator::fp16)
    narrow_kernel<false><<<blocks_for(q), kThreads>>>(da.data(), db.data(), p.m, p.n, p.k, dout.data());
  else
    narrow_kernel<true><<<blocks_for(q), kThreads>>>(da.data(), db.data(), p.m, p.n, p.k, dout.data());
  check_kernel("matmul");
  dout.download(std::span<double>(sums, q));
}

}  // namespace detail

// ---------------------------------------------------------------------------
// cuBLASLt, loaded on first use (dlopen): a program that links lplab::cuda
// but never calls cublas_matmul -- the tool, the tests -- does not pay its
// start-up (about 0.13 s and 200 MB mapped per process here).

namespace {

// The entry points used, with the header's own signatures.
struct Lt {
#define LPLAB_LT_FUNCTIONS(X)                                                                      \
  X(cublasLtCreate) X(cublasLtGetStatusString) X(cublasLtMatmulDescCreate)                          \
  X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)      \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
#define LPLAB_LT_MEMBER(f) decltype(&::f) f = nullptr;
  LPLAB_LT_FUNCTIONS(LPLAB_LT_MEMBER)
#undef LPLAB_LT_MEMBER
  cublasLtHandle_t handle = nullptr;
};

// The library, once; std::runtime_error saying why it cannot be had.
const Lt& lt() {
  static const Lt api = [] {
    Lt a;
    void* lib = nullptr;
    // The loader's path first, then the toolkit lplab was built with.
    const std::string so = "libcublasLt.so." LPLAB_STRINGIFY(CUBLAS_VER_MAJOR);
    for (const std::string& name : {so, std::string(LPLAB_CUDA_LIBRARY_DIR) + "/" + so})
      if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr)
      throw std::runtime_error(std::string("lplab::cuda: cuBLASLt could not be loaded: ") + dlerror());
#define LPLAB_LT_LOAD(f)                                                                             \
  a.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, #f));                                            \
  if (a.f == nullptr) throw std::runtime_error("lplab::cuda: cuBLASLt lacks " #f);
    LPLAB_LT_FUNCTIONS(LPLAB_LT_LOAD)
#undef LPLAB_LT_LOAD
    if (const cublasStatus_t st = a.cublasLtCreate(&a.handle); st != CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error(std::string("lplab::cuda: cuBLASLt cublasLtCreate: ") + a.cublasLtGetStatusString(st));
    return a;
  }();
  return api;
}

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("lplab::cuda: cuBLASLt ") + what + ": " + lt().cublasLtGetStatusString(s));
}

template <class T>
constexpr cudaDataType_t lt_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, bfloat16>) return CUDA_R_16BF;
  else if constexpr (std::is_same_v<T, float16>) return CUDA_R_16F;
  else if constexpr (std::is_same_v<T, float8_e4m3fn>) return CUDA_R_8F_E4M3;
  else return CUDA_R_8F_E5M2;
}

// RAII for cuBLASLt's descriptors: `destroy` is the Lt member that frees one.
template <class T, auto Lt::*Destroy>
struct Owned {
  T d = nullptr;
  ~Owned() {
    if (d) (lt().*Destroy)(d);
  }
};

}  // namespace

template <class TA, class TB, class TC>
void cublas_matmul(std::size_t m, std::size_t n, std::size_t k, DeviceSpan<const TA> a, DeviceSpan<const TB> b_t,
                   DeviceSpan<TC> c, float alpha) {
  if (a.size != m * k || b_t.size != n * k || c.size != m * n)
    detail::fail("cublas_matmul: A, B^T and C must hold m*k, n*k and m*n elements");
  constexpr bool fp8 = sizeof(TA) == 1;
  if (fp8 && (k % 16 != 0 || m % 16 != 0 || n % 16 != 0))
    detail::fail("cublas_matmul: FP8 needs m, n and k multiples of 16 (cuBLASLt's FP8 rules)");
  detail::require();
  if (m == 0 || n == 0) return;
  // Row-major C = A B is column-major C^T = B^T A^T: cuBLASLt's A is B^T
  // (stored k x n, column-major, transposed: "TN", FP8's layout), its B is
  // A^T (k x m column-major, as row-major A is stored).
  const Lt& api = lt();
  Owned<cublasLtMatmulDesc_t, &Lt::cublasLtMatmulDescDestroy> op;
  check_lt(api.cublasLtMatmulDescCreate(&op.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor");
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  check_lt(api.cublasLtMatmulDescSetAttribute(op.d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t), "transa");
  check_lt(api.cublasLtMatmulDescSetAttribute(op.d, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt), "transb");
  Owned<cublasLtMatrixLayout_t, &Lt::cublasLtMatrixLayoutDestroy> la, lb, lc;
  const auto u = [](std::size_t x) { return static_cast<std::uint64_t>(x); };
  check_lt(api.cublasLtMatrixLayoutCreate(&la.d, lt_type<TB>(), u(k), u(n), static_cast<std::int64_t>(k)), "layout");
  check_lt(api.cublasLtMatrixLayoutCreate(&lb.d, lt_type<TA>(), u(k), u(m), static_cast<std::int64_t>(k)), "layout");
  check_lt(api.cublasLtMatrixLayoutCreate(&lc.d, lt_type<TC>(), u(n), u(m), static_cast<std::int64_t>(n)), "layout");
  Owned<cublasLtMatmulPreference_t, &Lt::cublasLtMatmulPreferenceDestroy> pref;
  check_lt(api.cublasLtMatmulPreferenceCreate(&pref.d), "preference");
  constexpr std::size_t kWorkspace = std::size_t{32} << 20;
  check_lt(api.cublasLtMatmulPreferenceSetAttribute(pref.d, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kWorkspace,
                                                    sizeof kWorkspace),
           "workspace");
  cublasLtMatmulHeuristicResult_t h{};
  int found = 0;
  check_lt(api.cublasLtMatmulAlgoGetHeuristic(api.handle, op.d, la.d, lb.d, lc.d, lc.d, pref.d, 1, &h, &found),
           "heuristic");
  if (found == 0) throw std::runtime_error("lplab::cuda: cuBLASLt has no algorithm for these types and sizes");
  static Buffer<unsigned char> workspace(kWorkspace);
  const float beta = 0.0f;
  check_lt(api.cublasLtMatmul(api.handle, op.d, &alpha, b_t.data, la.d, a.data, lb.d, &beta, c.data, lc.d, c.data,
                              lc.d, &h.algo, workspace.data(), kWorkspace, nullptr),
           "matmul");
  detail::check_kernel("cublas_matmul");
}

template void cublas_matmul<float, float, float>(std::size_t, std::size_t, std::size_t, DeviceSpan<const float>,
                                                 DeviceSpan<const float>, DeviceSpan<float>, float);
#define LPLAB_CUDA_LT(A, B, C)                                                                                \
  template void cublas_matmul<A, B, C>(std::size_t, std::size_t, std::size_t, DeviceSpan<const A>,           \
                                       DeviceSpan<const B>, DeviceSpan<C>, float);
LPLAB_CUDA_LT(bfloat16, bfloat16, float)
LPLAB_CUDA_LT(bfloat16, bfloat16, bfloat16)
LPLAB_CUDA_LT(float16, float16, float)
LPLAB_CUDA_LT(float16, float16, float16)
LPLAB_CUDA_LT(float8_e4m3fn, float8_e4m3fn, float)
LPLAB_CUDA_LT(float8_e4m3fn, float8_e4m3fn, bfloat16)
LPLAB_CUDA_LT(float8_e4m3fn, float8_e5m2, float)
LPLAB_CUDA_LT(float8_e5m2, float8_e4m3fn, float)
#undef LPLAB_CUDA_LT

}  // namespace lplab::cuda
