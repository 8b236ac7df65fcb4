// Instructions beyond the Highway targets' own (targets.h: cpu_extensions).
//
// Debian 12's Highway (1.0.3) compiles AVX-512 as one target, AVX3 (F, VL,
// DQ, BW); its AVX3_DL target (VBMI, VBMI2, VNNI, ...) is attainable only
// with HWY_WANT_AVX3_DL, which would compile every kernel of lplab once more.
// So the few kernels that gain from an extension are written once more here,
// each under a GCC/Clang `target` attribute, and a call takes one when
//   1. the CPU has the extension (the compiler's CPUID probe, read once),
//   2. the calling thread's target is the extension's base (AVX3 for the
//      AVX-512 ones: forcing AVX2 or lower leaves them out), and
//   3. neither LPLAB_CPU_EXTENSIONS=off nor force_thread_cpu_extensions(false)
//      forbids them (tests and benchmarks compare both ways).
// Each kernel has a test against its scalar loop on every machine that has
// the extension (elementwise_test: one_byte_tables_with_and_without_extensions).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch.h"
#include "hwy/highway.h"
#include "lplab/kernels/targets.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LPLAB_X86_EXTENSIONS 1
#else
#define LPLAB_X86_EXTENSIONS 0
#endif

namespace lplab::kernels {

namespace {

// 1 allowed, 0 forbidden on this thread, -1 as the process says.
thread_local int t_allowed = -1;

bool process_allows() {
  static const bool allowed = [] {
    const char* v = std::getenv("LPLAB_CPU_EXTENSIONS");
    return v == nullptr || std::string_view(v) != "off";
  }();
  return allowed;
}

bool cpu_has_vbmi() {
#if LPLAB_X86_EXTENSIONS
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has;
#else
  return false;
#endif
}

bool allowed() { return t_allowed >= 0 ? t_allowed == 1 : process_allows(); }

}  // namespace

namespace detail {

bool avx512_vbmi_active() {
  return cpu_has_vbmi() && allowed() && current_target_id() == HWY_AVX3;
}

#if LPLAB_X86_EXTENSIONS
#define LPLAB_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
// out[i] = table[in[i]] for n bytes (in may be out), 64 at a time: two
// vpermi2b (each a 128-byte table: the index's low 7 bits pick a byte of two
// registers), the index's top bit choosing between them (vpmovb2m and a
// masked blend). The tail by masked loads and stores.
LPLAB_VBMI void lookup_bytes_vbmi(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out,
                                  std::size_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
#define LPLAB_LOOKUP(x)                                                                 \
  _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), _mm512_permutex2var_epi8(t0, x, t1), \
                         _mm512_permutex2var_epi8(t2, x, t3))
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i x = _mm512_loadu_si512(in + i);
    _mm512_storeu_si512(out + i, LPLAB_LOOKUP(x));
  }
  if (i < n) {
    const __mmask64 m = (std::uint64_t{1} << (n - i)) - 1;  // n - i < 64
    const __m512i x = _mm512_maskz_loadu_epi8(m, in + i);
    _mm512_mask_storeu_epi8(out + i, m, LPLAB_LOOKUP(x));
  }
#undef LPLAB_LOOKUP
}
#undef LPLAB_VBMI
#else
void lookup_bytes_vbmi(const std::uint8_t* table, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = table[in[i]];  // not reached: avx512_vbmi_active() is false
}
#endif

}  // namespace detail

void force_thread_cpu_extensions(bool allow) { t_allowed = allow ? 1 : 0; }

std::vector<std::string> cpu_extensions() {
  std::vector<std::string> out;
  if (detail::avx512_vbmi_active()) out.emplace_back("AVX512_VBMI");
  return out;
}

}  // namespace lplab::kernels
