// The loops that measure this machine's roofs, as the Empirical Roofline
// Toolkit does (ERT; Lo et al. 2014, "Roofline Model Toolkit: A Practical
// Tool for Architectural and Program Analysis"): independent chains of fused
// multiply-adds for the compute peak, STREAM's copy and triad (McCalpin 1995)
// for the bandwidth. They are kernels like the others: compiled for every
// SIMD target and dispatched the same way (targets.h), so LPLAB_SIMD_TARGET
// and force_simd_target choose the vector width a peak is measured at. Each
// call runs on the calling thread; the experiments' machine_peaks and the
// benchmarks time them and spread them over threads.
#pragma once

#include <cstddef>

namespace lplab::kernels::probe {

// Independent accumulator chains per FMA loop: an FMA has a latency of 4 to 5
// cycles on current x86 cores and 2 FMA ports, so at least 5 x 2 = 10 chains
// keep both ports busy; 16 still fits AVX-512's 32 vector registers beside the
// two operands.
inline constexpr int kFmaChains = 16;

// `iters` rounds of kFmaChains vector FMAs on float / double in the
// dispatched target; returns the FLOPs done (2 per lane per FMA:
// 2 x kFmaChains x lanes x iters). The result depends on every chain.
double fma_f32(std::size_t iters);
double fma_f64(std::size_t iters);

// The lanes of one vector of float in the dispatched target (4 for SSE4,
// 8 for AVX2, 16 for AVX3).
std::size_t f32_lanes();

// True when the CPU runs VDPBF16PS (AVX512-BF16; CPUID at run time): the
// one check of it, which Accumulator::bf16_dot2 also asks before using it.
bool has_bf16_dot();

// `iters` rounds of kBf16Chains VDPBF16PS on zmm (32 bf16 pairs into 16 fp32
// lanes, two products each: 64 FLOPs per instruction, Intel SDM); returns
// the FLOPs done. Its latency is about 6 cycles on Zen 4/5 and Sapphire
// Rapids with two issued per cycle, which 12 chains cover. Throws
// std::invalid_argument where has_bf16_dot() is false.
inline constexpr int kBf16Chains = 12;
double bf16_dot(std::size_t iters);

// STREAM's copy c[i] = a[i] and triad a[i] = b[i] + s c[i] for i in [lo, hi),
// in the dispatched target's widest vectors. `nt`: non-temporal stores, which
// skip the read-for-ownership of the destination (what memcpy and lplab's
// kernels may do on large arrays, so a roof has to allow it); they need the
// arrays aligned to the vector (hwy::AllocateAligned gives that).
void stream_copy(const double* a, double* c, std::size_t lo, std::size_t hi, bool nt);
void stream_triad(double* a, const double* b, const double* c, double s, std::size_t lo,
                  std::size_t hi, bool nt);

}  // namespace lplab::kernels::probe
