// The one way a kernel reaches its code for a SIMD target. Every compiled
// kernel (foreach_target + HWY_EXPORT) is called through LPLAB_DISPATCH, and
// nothing else in lplab indexes Highway's dispatch tables, so the choice of
// target -- LPLAB_SIMD_TARGET, force_simd_target, force_thread_simd_target
// (targets.h), else Highway's best for the CPU -- holds for every kernel
// alike: conversions, scaling, elementwise ops, the tensor-core and narrow
// accumulators, the GEMM's Eigen copies (matmul.cpp picks by
// current_simd_target()) and the machine probes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

namespace lplab::kernels {

// The entry of a HWY_EXPORT table that calls on this thread use: the target
// forced for this thread or the process, else Highway's choice for the CPU
// (entry 0, which makes that choice at the first call, while none is made).
// Only for tables of a multi-target build (below).
std::size_t dispatch_index();

namespace detail {
// Whether float arithmetic and conversions on this thread see subnormals as
// they are: on x86 MXCSR's DAZ (bit 6) and FTZ (bit 15) must be clear.
// Elsewhere (Arm's FPCR.FZ flushes inputs too) the kernels keep to integer
// code.
bool float_arithmetic_exact();

// current_simd_target().id without building its name: for checks made on
// every call.
std::int64_t current_target_id();

// The calling thread's permission for the CPU extensions (1 allowed, 0
// forbidden, -1 as the process says), which a worker it starts takes
// (row_bands.h, bulk_convert), as it takes the caller's SIMD target.
int thread_cpu_extensions();
void set_thread_cpu_extensions(int state);

// The kernels beyond the targets (cpu_extensions.cpp): whether calls on
// this thread use AVX-512 VBMI now, and its one-byte table lookup (out[i] =
// table[in[i]], in may be out; the signature of elementwise-inl.h's
// LookupBytes).
bool avx512_vbmi_active();
void lookup_bytes_vbmi(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out, std::size_t n);
// AVX-512 FP16 and BF16 likewise: fp16 in and out, one correctly rounded op
// (kernel_args.h's FusedArgs; false, nothing done, for what it does not
// serve), and float -> bfloat16 to nearest-even under IEEE overflow.
bool avx512_fp16_active();
bool avx512_bf16_active();
void encode_bf16_nearest_avx512bf16(const float* in, std::uint16_t* out, std::size_t n);
}  // namespace detail

}  // namespace lplab::kernels

// With one target compiled (HWY_COMPILE_ONLY_STATIC, or every other target
// disabled) HWY_EXPORT makes a table of a single entry (hwy/highway.h), and
// the only target there is to force is that one: the call is static. Indexing
// that table by the CPU's best target would read past its end. dispatch_index
// still runs, for what it checks (an invalid LPLAB_SIMD_TARGET).
#if HWY_IDE || ((HWY_TARGETS & (HWY_TARGETS - 1)) == 0)
#define LPLAB_DISPATCH(FUNC_NAME) (static_cast<void>(::lplab::kernels::dispatch_index()), HWY_STATIC_DISPATCH(FUNC_NAME))
#else
#define LPLAB_DISPATCH(FUNC_NAME) (*(HWY_DISPATCH_TABLE(FUNC_NAME)[::lplab::kernels::dispatch_index()]))
#endif
