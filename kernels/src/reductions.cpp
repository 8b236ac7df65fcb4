// The reductions (lplab/kernels/elementwise.h): sum and amax over every
// element of a strided operand, read in row-major order a chunk at a time
// (the walk's Cursor and gather, strided_walk.h), and round_to.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/exact_sum.h"
#include "strided_walk.h"

namespace lplab::kernels {

using namespace detail;  // the engine's walk (strided_walk.h)

namespace {

// One strided operand read in row-major order, a chunk at a time (the
// reductions, whose fp32 and storage sums are defined in that order).
class Reader {
 public:
  explicit Reader(const Operand& x)
      : x_(x), bytes_(element_bytes(x.format)), cursor_(x.layout), codes_(kChunk * bytes_) {}
  void read(std::size_t count, float* out) {
    const void* codes;
    if (cursor_.contiguous()) {
      codes = static_cast<const unsigned char*>(x_.data) + cursor_.position() * static_cast<std::ptrdiff_t>(bytes_);
      cursor_.skip(count);
    } else {
      cursor_.next(count, offsets_.data());
      gather(x_.data, bytes_, offsets_.data(), count, codes_.data());
      codes = codes_.data();
    }
    bulk_convert(FormatId::float32, x_.format, codes, out, count, {});
  }

 private:
  const Operand& x_;
  std::size_t bytes_;
  Cursor cursor_;
  std::vector<unsigned char> codes_;
  std::array<std::ptrdiff_t, kChunk> offsets_{};
};

}  // namespace

double reduce_sum(const Operand& x, Accumulate acc) {
  if (acc != Accumulate::fp64 && acc != Accumulate::fp32 && acc != Accumulate::storage)
    fail("sum: unknown accumulation " + std::to_string(static_cast<int>(acc)));
  const std::size_t n = x.layout.numel();
  Reader in(x);
  std::vector<float> buf(kChunk);
  double s64 = 0;
  float s32 = 0;
  double sst = 0;  // a value of the format
  const FormatId f = x.format;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    in.read(count, buf.data());
    switch (acc) {
      case Accumulate::fp64:
        for (std::size_t i = 0; i < count; ++i) s64 += buf[i];
        break;
      case Accumulate::fp32:
        for (std::size_t i = 0; i < count; ++i) s32 += buf[i];
        break;
      case Accumulate::storage:
        visit_format(f, [&](auto t) {
          using T = typename decltype(t)::type;
          for (std::size_t i = 0; i < count; ++i)
            sst = narrow_add<T>(sst, buf[i]);
        });
        break;
    }
  }
  switch (acc) {
    case Accumulate::fp64: return s64;
    case Accumulate::fp32: return s32;
    case Accumulate::storage:
      // An empty sum is +0, which E8M0 cannot hold: its nearest-even rounding is NaN.
      return n == 0 ? round_to(f, 0.0) : sst;
  }
  fail("sum: unknown accumulation " + std::to_string(static_cast<int>(acc)));
}

double reduce_amax(const Operand& x) {
  const std::size_t n = x.layout.numel();
  Reader in(x);
  std::vector<float> buf(kChunk);
  float m = 0;
  bool nan = false;
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    in.read(count, buf.data());
    for (std::size_t i = 0; i < count; ++i) {
      nan |= std::isnan(buf[i]);
      m = std::max(m, std::fabs(buf[i]));
    }
  }
  return nan ? std::numeric_limits<double>::quiet_NaN() : m;
}

double round_to(FormatId format, double v) {
  return visit_format(format, [&](auto t) {
    using T = typename decltype(t)::type;
    return static_cast<double>(lplab::convert<T>(v, Round::nearest_even, Overflow::ieee));
  });
}

}  // namespace lplab::kernels
