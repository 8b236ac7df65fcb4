// The one dispatch point of the bulk conversion: picks the kernel for a pair
// of formats, splits the work across threads and chunks, and routes format ->
// format conversions through float.
#include <algorithm>
#include <atomic>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "kernel_args.h"
#include "streaming.h"
#include "lplab/kernels/targets.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <xmmintrin.h>
#endif

namespace lplab::kernels {

// Defined in the generated per-format translation units (kernels/CMakeLists.txt
// makes one per catalog format but float32, which is float itself).
#define LPLAB_DECLARE(type, names, description) \
  void encode_##type(const EncodeArgs& a);       \
  void decode_##type(const DecodeArgs& a);       \
  bool widen16_##type(const Widen16Args& a);
LPLAB_FORMAT_CATALOG(LPLAB_DECLARE)
#undef LPLAB_DECLARE

namespace detail {
bool float_arithmetic_exact() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & 0x8040u) == 0;
#else
  return false;
#endif
}
}  // namespace detail

namespace {

using detail::float_arithmetic_exact;

// The target forced for the calling thread (targets.h); 0: none.
thread_local std::int64_t t_forced = 0;


using EncodeFn = void (*)(const EncodeArgs&);
using DecodeFn = void (*)(const DecodeArgs&);
using Widen16Fn = bool (*)(const Widen16Args&);

struct Kernels {
  EncodeFn encode;
  DecodeFn decode;
  Widen16Fn widen16;
  std::size_t code_bytes;
  bool integer;  // Encoding::integer: the one kind Overflow::wrap applies to
};

// Indexed by FormatId. float32 is float itself: no kernel (its encode_/decode_,
// declared above, are named only in the discarded branch, so never defined).
constexpr std::array<Kernels, format_count> kKernels = {{
#define LPLAB_ENTRY(type, names, description)                                \
  [] {                                                                        \
    if constexpr (std::is_same_v<lplab::type, lplab::float32>)                \
      return Kernels{nullptr, nullptr, nullptr, 4, false};                    \
    else                                                                      \
      return Kernels{&encode_##type, &decode_##type, &widen16_##type,         \
                     sizeof(lplab::type),                                     \
                     lplab::type::descriptor.encoding == Encoding::integer};  \
  }(),
    LPLAB_FORMAT_CATALOG(LPLAB_ENTRY)
#undef LPLAB_ENTRY
}};

const Kernels& kernels_of(FormatId id) {
  const int i = static_cast<int>(id);
  if (i < 0 || i >= static_cast<int>(kKernels.size()))
    throw std::invalid_argument("lplab::kernels: unknown format id " + std::to_string(i));
  return kKernels[static_cast<std::size_t>(i)];
}

// float -> float32 is exact but quiets signalling NaNs, as every conversion
// does (IEEE 754-2019 6.2.3; round.h's pack_nan).
void float_to_float(const float* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, in + i, 4);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) b |= 0x00400000u;
    std::memcpy(out + i, &b, 4);
  }
}

// Into float every value is exact. Only one thing remains of the policies and
// flags (round.h): an infinity under Overflow::saturate becomes +-max,
// raising overflow and inexact (pack_infinity). A subnormal result is exact,
// so it raises no underflow (IEEE 754-2019 7.5: tiny and inexact).
void finish_float_results(float* out, std::size_t n, Overflow o, FlagCounts* stats) {
  if (o != Overflow::saturate) return;
  std::uint64_t saturated = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t b;
    std::memcpy(&b, out + i, 4);
    const std::uint32_t mag = b & 0x7FFFFFFFu;
    if (mag == 0x7F800000u) {
      b -= 1;  // 0x7F800000 -> 0x7F7FFFFF, the largest finite magnitude; the sign stays
      std::memcpy(out + i, &b, 4);
      ++saturated;
    }
  }
  if (stats != nullptr) {
    stats->overflow += saturated;
    stats->inexact += saturated;
  }
}

// Encodes [0, n) of `in`, whose element 0 has global index `first`, in calls
// that never cross a 2^32 boundary of the index (the random bits' key
// changes there).
void encode_range(const Kernels& k, const float* in, void* out, std::size_t n, std::uint64_t first,
                  const ConvertOptions& o, FlagCounts* stats) {
  std::size_t done = 0;
  while (done < n) {
    const std::uint64_t index = first + done;
    const std::uint64_t to_boundary = (std::uint64_t{1} << 32) - (index & 0xFFFFFFFFu);
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, to_boundary));
    k.encode(EncodeArgs{in + done, static_cast<std::byte*>(out) + done * k.code_bytes, len, o.round,
                        o.overflow, o.seed, index, stats, float_arithmetic_exact()});
    done += len;
  }
}

// One thread's share: [begin, end) of the whole call. bf16_extension: the
// calling thread's avx512_bf16_active(), which its workers take.
void convert_range(FormatId to, FormatId from, const void* in, void* out, std::size_t begin,
                   std::size_t end, const ConvertOptions& o, FlagCounts* stats, bool bf16_extension) {
  const Kernels& kt = kernels_of(to);
  const Kernels& kf = kernels_of(from);
  const auto* src = static_cast<const std::byte*>(in) + begin * kf.code_bytes;
  auto* dst = static_cast<std::byte*>(out) + begin * kt.code_bytes;
  const std::size_t n = end - begin;
  const std::uint64_t first = o.first_index + begin;
  if (to == FormatId::float32) {
    auto* result = reinterpret_cast<float*>(dst);
    if (from == FormatId::float32) float_to_float(reinterpret_cast<const float*>(src), result, n);
    else kf.decode(DecodeArgs{src, result, n, float_arithmetic_exact()});
    finish_float_results(result, n, o.overflow, stats);
  } else if (from == FormatId::float32) {
    // float -> bfloat16 to nearest-even under IEEE overflow, no flags: by
    // AVX-512 BF16 where the thread uses it (cpu_extensions.cpp).
    if (bf16_extension && to == FormatId::bfloat16 && o.round == Round::nearest_even &&
        o.overflow == Overflow::ieee && stats == nullptr) {
      detail::encode_bf16_nearest_avx512bf16(reinterpret_cast<const float*>(src),
                                             reinterpret_cast<std::uint16_t*>(dst), n);
      return;
    }
    encode_range(kt, reinterpret_cast<const float*>(src), dst, n, first, o, stats);
  } else {
    // Into bfloat16 or float16 where every value of the source is one there
    // (FP8, FP6, FP4): decoded in registers, no rounding, no flags to count.
    if (stats == nullptr && (to == FormatId::bfloat16 || to == FormatId::float16) &&
        kf.widen16(Widen16Args{src, reinterpret_cast<std::uint16_t*>(dst), n, to == FormatId::float16,
                               o.overflow, float_arithmetic_exact()}))
      return;
    // Otherwise through float, a chunk at a time: decoding is exact, so the one
    // rounding is the encode's, as in the scalar core's direct conversion.
    constexpr std::size_t kChunk = 2048;
    alignas(64) float buffer[kChunk];
    const bool exact = float_arithmetic_exact();
    for (std::size_t done = 0; done < n; done += kChunk) {
      const std::size_t len = std::min(kChunk, n - done);
      kf.decode(DecodeArgs{src + done * kf.code_bytes, buffer, len, exact});
      encode_range(kt, buffer, dst + done * kt.code_bytes, len, first + done, o, stats);
    }
  }
}

// LPLAB_SIMD_TARGET, read once before the first kernel runs.
void apply_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* want = std::getenv("LPLAB_SIMD_TARGET");
    if (want == nullptr || *want == '\0') return;
    for (const SimdTarget& t : simd_targets()) {
      if (t.name == want) {
        force_simd_target(t.id);
        return;
      }
    }
    std::string names;
    for (const SimdTarget& t : simd_targets()) names += (names.empty() ? "" : ", ") + t.name;
    throw std::invalid_argument("LPLAB_SIMD_TARGET='" + std::string(want) +
                                "' is not a target this build and CPU run (" + names + ")");
  });
}

// A share [begin, end) whose output goes past the caches: converted a slice
// at a time into a buffer that stays in L1, each slice's lines streamed to
// out (detail::stream_bytes), so that the output's lines are never read
// first, as a large memcpy writes them; then fenced.
void convert_streamed(FormatId to, FormatId from, const void* in, void* out, std::size_t begin, std::size_t end,
                      const ConvertOptions& o, FlagCounts* stats, bool bf16_extension) {
  constexpr std::size_t kSlice = 4096;
  const std::size_t in_bytes = kernels_of(from).code_bytes, out_bytes = kernels_of(to).code_bytes;
  alignas(64) unsigned char buffer[kSlice * sizeof(double)];  // (codes are at most 4 bytes)
  for (std::size_t s = begin; s < end; s += kSlice) {
    const std::size_t len = std::min(kSlice, end - s);
    ConvertOptions slice = o;
    slice.first_index = o.first_index + s;
    convert_range(to, from, static_cast<const unsigned char*>(in) + s * in_bytes, buffer, 0, len, slice, stats,
                  bf16_extension);
    detail::stream_bytes(static_cast<unsigned char*>(out) + s * out_bytes, buffer, len * out_bytes);
  }
  detail::fence_streams();
}

}  // namespace

std::size_t streaming_output_bytes() { return detail::linear_stream_from(); }

void bulk_convert(FormatId to, FormatId from, const void* in, void* out, std::size_t n,
                  const ConvertOptions& given) {
  apply_environment();
  const Kernels& target = kernels_of(to);
  (void)kernels_of(from);
  // Overflow::wrap is ieee into a floating-point format, as in the scalar
  // core (round.h); the fast paths then see the policy they know.
  ConvertOptions options = given;
  if (options.overflow == Overflow::wrap && !target.integer) options.overflow = Overflow::ieee;
  if (n == 0) return;
  // Threads only pay off on large arrays: at least 256K elements each.
  constexpr std::size_t kPerThread = std::size_t{1} << 18;
  unsigned threads = options.threads == 0 ? std::max(1u, std::thread::hardware_concurrency())
                                          : options.threads;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, n / kPerThread)));
  const bool bf16_extension = detail::avx512_bf16_active();
  // An output of at least detail::linear_stream_from() bytes (past the
  // last-level cache) is streamed.
  const bool stream = n * target.code_bytes >= detail::linear_stream_from();
  auto run = [&](std::size_t begin, std::size_t end, FlagCounts* stats) {
    if (stream) convert_streamed(to, from, in, out, begin, end, options, stats, bf16_extension);
    else convert_range(to, from, in, out, begin, end, options, stats, bf16_extension);
  };
  if (threads <= 1) {
    run(0, n, options.stats);
    return;
  }
  // Contiguous shares, each a multiple of 64 elements so that no two threads
  // write the same cache line.
  std::vector<FlagCounts> counts(threads);
  std::vector<std::thread> pool;
  const std::size_t share = (n / threads + 63) / 64 * 64;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * share);
    const std::size_t end = t + 1 == threads ? n : std::min(n, begin + share);
    FlagCounts* stats = options.stats != nullptr ? &counts[t] : nullptr;
    // Workers run the target the caller's thread runs.
    pool.emplace_back([=, &run, forced = t_forced, extensions = detail::thread_cpu_extensions()] {
      t_forced = forced;
      detail::set_thread_cpu_extensions(extensions);
      run(begin, end, stats);
    });
  }
  for (auto& th : pool) th.join();
  if (options.stats != nullptr)
    for (const FlagCounts& c : counts) *options.stats += c;
}

namespace {

// 0: automatic; else a Highway target bit.
std::atomic<std::int64_t> g_forced{0};

// Read once: Highway's SupportedTargets() runs CPUID on every call, which a
// hypervisor traps (microseconds each), and the answer cannot change.
std::int64_t available_targets() {
  static const std::int64_t all = hwy::SupportedTargets() & HWY_TARGETS;
  return all;
}

std::int64_t effective_target() {
  if (t_forced != 0) return t_forced;
  if (const std::int64_t g = g_forced.load(std::memory_order_relaxed); g != 0) return g;
  const std::int64_t all = available_targets();
  return all & -all;  // lower bits are the better targets
}

void check_target(std::int64_t id) {
  if (id != 0 && ((id & (id - 1)) != 0 || (available_targets() & id) == 0))
    throw std::invalid_argument("lplab::kernels: SIMD target " + std::to_string(id) +
                                " is not compiled in or not supported by this CPU");
}

}  // namespace

// Highway's dispatch tables hold, after an initialising entry 0, one entry per
// dynamic target in the order of HWY_CHOSEN_TARGET_SHIFT, and the baseline
// (EMU128/SCALAR) last (hwy/targets.h, "ChosenTarget mask format").
std::size_t dispatch_index() {
  apply_environment();  // LPLAB_SIMD_TARGET holds for the first kernel of any kind
  if (t_forced == 0 && g_forced.load(std::memory_order_relaxed) == 0)
    return hwy::GetChosenTarget().GetIndex();
  std::int64_t mask = HWY_CHOSEN_TARGET_SHIFT(effective_target());
  if (mask == 0) mask = HWY_CHOSEN_TARGET_MASK_SCALAR;
  return hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<std::uint64_t>(mask & HWY_CHOSEN_TARGET_MASK_TARGETS));
}

std::vector<SimdTarget> simd_targets() {
  std::vector<SimdTarget> out;
  for (std::int64_t all = available_targets(); all != 0; all &= all - 1) {
    const std::int64_t t = all & -all;
    out.push_back({t, hwy::TargetName(t)});
  }
  return out;
}

std::int64_t detail::current_target_id() {
  apply_environment();
  return effective_target();
}

SimdTarget current_simd_target() {
  const std::int64_t t = detail::current_target_id();
  return {t, hwy::TargetName(t)};
}

void force_simd_target(std::int64_t id) {
  check_target(id);
  g_forced.store(id, std::memory_order_relaxed);
}

void force_thread_simd_target(std::int64_t id) {
  check_target(id);
  t_forced = id;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(" \t"));
        if (!name.empty()) return name;
      }
    }
  }
#if defined(__x86_64__) || defined(__i386__)
  unsigned regs[12];
  if (__get_cpuid(0x80000002u, &regs[0], &regs[1], &regs[2], &regs[3]) &&
      __get_cpuid(0x80000003u, &regs[4], &regs[5], &regs[6], &regs[7]) &&
      __get_cpuid(0x80000004u, &regs[8], &regs[9], &regs[10], &regs[11])) {
    char brand[49] = {};
    std::memcpy(brand, regs, 48);
    std::string name(brand);
    name.erase(0, name.find_first_not_of(' '));
    return name;
  }
#endif
  return "unknown CPU";
}

}  // namespace lplab::kernels
