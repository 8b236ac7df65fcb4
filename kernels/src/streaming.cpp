// Streaming stores (streaming.h).
#include "streaming.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lplab::kernels::detail {

namespace {
// 0: the machine's threshold; else this thread's (ScopedLinearStreamFrom).
thread_local std::size_t t_linear_stream_from = 0;
}  // namespace

std::size_t linear_stream_from() {
  static const std::size_t machine = [] {
    long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (cache <= 0) cache = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return std::max(kStreamFrom, cache > 0 ? static_cast<std::size_t>(cache) / 4 * 3 : kStreamFrom);
  }();
  return t_linear_stream_from != 0 ? t_linear_stream_from : machine;
}

ScopedLinearStreamFrom::ScopedLinearStreamFrom(std::size_t bytes) : saved_(t_linear_stream_from) {
  t_linear_stream_from = bytes;
}
ScopedLinearStreamFrom::~ScopedLinearStreamFrom() { t_linear_stream_from = saved_; }

void stream_bytes(unsigned char* dst, const unsigned char* src, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  i = std::min(n, (kLine - reinterpret_cast<std::uintptr_t>(dst) % kLine) % kLine);
  std::memcpy(dst, src, i);
  for (; i + kLine <= n; i += kLine)
    for (std::size_t k = 0; k < kLine; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + k)));
#endif
  std::memcpy(dst + i, src + i, n - i);
}

void fence_streams() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace lplab::kernels::detail
