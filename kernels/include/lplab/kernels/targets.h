// The SIMD targets of lplab's compiled kernels. Every kernel is compiled once
// per instruction set (Google Highway's foreach_target: SSSE3, SSE4, AVX2,
// AVX-512 on x86; NEON/SVE on Arm; EMU128, the portable path, everywhere) and
// one dispatch point picks the best the CPU runs, at the first call.
//
// The environment variable LPLAB_SIMD_TARGET (a name from simd_targets(),
// e.g. "AVX2" or "EMU128") pins the choice for a whole process; tests and
// benchmarks use force_simd_target / ScopedSimdTarget to run every target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lplab::kernels {

struct SimdTarget {
  std::int64_t id;   // Highway's target bit (HWY_AVX2, ...)
  std::string name;  // Highway's name for it ("AVX2", "AVX3", "EMU128", ...)
};

// The targets compiled into lplab that this CPU can run, best first.
std::vector<SimdTarget> simd_targets();

// The target the kernels dispatch to now.
SimdTarget current_simd_target();

// Makes every kernel use target `id` (one of simd_targets()); 0 returns to
// the automatic choice. Throws std::invalid_argument for a target this CPU or
// build lacks.
void force_simd_target(std::int64_t id);

// The same for the calling thread only (it wins over the process-wide
// choice), so that one sweep can compare several targets side by side.
// Worker threads that a kernel starts itself (ConvertOptions::threads) run
// the target of the thread that called it.
void force_thread_simd_target(std::int64_t id);

// Forces a target on this thread for a scope.
class ScopedSimdTarget {
 public:
  explicit ScopedSimdTarget(std::int64_t id) { force_thread_simd_target(id); }
  ~ScopedSimdTarget() { force_thread_simd_target(0); }
  ScopedSimdTarget(const ScopedSimdTarget&) = delete;
  ScopedSimdTarget& operator=(const ScopedSimdTarget&) = delete;
};

// Instructions beyond the targets' own that some kernels use where the CPU
// has them (docs/kernels.md, "Beyond Highway's targets"), under the AVX3
// target: "AVX512_VBMI" (vpermi2b: the one-byte tables of elementwise ops),
// "AVX512_FP16" (vaddph, vmulph: fp16 add, mul, square, scale) and
// "AVX512_BF16" (vcvtne2ps2bf16: float -> bfloat16 to nearest-even).
// Returns the ones calls on this thread use now: none when the target is
// forced below their base, when LPLAB_CPU_EXTENSIONS=off, or after
// force_thread_cpu_extensions(false).
std::vector<std::string> cpu_extensions();

// Allows (the default) or forbids the extensions on the calling thread, so
// that a test or benchmark runs a target's kernels with and without them.
void force_thread_cpu_extensions(bool allow);

namespace detail {
// The name of the target whose code a kernel call on this thread reaches now
// (for tests: forcing a target must run that target's code).
const char* dispatched_target_name();
}  // namespace detail

// The CPU's model name (from /proc/cpuinfo or CPUID), for reports and
// benchmark output beside every figure.
std::string cpu_model();

}  // namespace lplab::kernels
