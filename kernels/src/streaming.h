// Streaming stores: writing an output past the caches, as a large memcpy
// does (the elementwise walk's streamed lines, strided_walk.h; bulk
// conversions of outputs past the last-level cache, dispatch.cpp).
#pragma once

#include <cstddef>

namespace lplab::kernels::detail {

// An output of line-wide tiles (Walker) at least this large is written by
// streaming stores: larger than one core's L2, where it would not stay.
constexpr std::size_t kStreamFrom = std::size_t{4} << 20;
constexpr std::size_t kLine = 64;  // bytes of a cache line

// A contiguous walk's output at least this large is written by streaming
// stores too: it would not stay in the last-level cache, and an ordinary
// store reads each line before writing it (a third more traffic than a
// memcpy, whose large copies stream: glibc's non-temporal threshold). Three
// quarters of the largest cache (sysconf's level-3 size, else level 2), at
// least kStreamFrom. A test may lower it on its thread's walks
// (ScopedLinearStreamFrom) to reach the path with small arrays.
std::size_t linear_stream_from();
class ScopedLinearStreamFrom {
 public:
  explicit ScopedLinearStreamFrom(std::size_t bytes);
  ~ScopedLinearStreamFrom();
  ScopedLinearStreamFrom(const ScopedLinearStreamFrom&) = delete;
  ScopedLinearStreamFrom& operator=(const ScopedLinearStreamFrom&) = delete;

 private:
  std::size_t saved_;
};


// Copies n bytes to dst: its whole cache lines by streaming stores (SSE2's
// movntdq, four to a line: written past the caches, without the read of the
// line an ordinary store starts with), the bytes around them by memcpy. The
// caller fences (fence_streams) before its work is seen as done.
void stream_bytes(unsigned char* dst, const unsigned char* src, std::size_t n);
// Orders a thread's streamed lines before its later stores (sfence).
void fence_streams();

}  // namespace lplab::kernels::detail
