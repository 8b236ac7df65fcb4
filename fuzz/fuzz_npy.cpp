// libFuzzer target: the .npy reader, through its in-memory entry point
// parse_npy (experiments/src/npy.cpp), which read_npy shares.
//
// Invariants: parse_npy returns or throws UsageError (anything else escapes
// and is a crash); on success the element count is the product of the shape
// and the data section is exactly count * element-width bytes, the tail of
// the input; and for a float32 file whose header is a dictionary as NumPy
// writes it ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }),
// every element equals what the small decoder below reads from that tail on
// its own: 4 bytes per element in the file's byte order, in C order, or in
// Fortran order mapped to C order by index arithmetic (NumPy's format.rst,
// "Format Version 1.0").
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/lab/npy.h"
#include "lplab/runtime/text.h"

namespace lx = lplab::experiments;

namespace {

// Elements the fuzzer may ask for: enough for every layout, small enough
// that a claimed shape never exhausts -rss_limit_mb.
constexpr std::size_t max_elements = std::size_t{1} << 16;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_npy: %s\n", what);
  std::abort();
}

// The header text by the framing alone: magic (6), version (2), then the
// header length in 2 (1.0) or 4 (2.0) little-endian bytes.
std::string_view header_of(std::string_view bytes) {
  const std::size_t len_bytes = bytes[6] == 1 ? 2 : 4;
  std::size_t len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  return bytes.substr(8 + len_bytes, len);
}

// The independent decoder: the header must be NumPy's own spelling, then
// element k (C order) is read from the data section directly.
void check_float32(std::string_view bytes, const lx::NpyArray& a) {
  static const std::regex numpy_dict(
      R"(\{'descr': '([<>])f4', 'fortran_order': (True|False), 'shape': \(([0-9, ]*)\), \} *\n)");
  const std::string header(header_of(bytes));
  std::smatch m;
  if (!std::regex_match(header, m, numpy_dict)) return;
  const bool big = m[1] == ">";
  const bool fortran = m[2] == "True";
  std::vector<std::size_t> shape;
  const std::string dims = m[3];
  for (std::size_t i = 0; i < dims.size();) {
    if (dims[i] < '0' || dims[i] > '9') {
      ++i;
      continue;
    }
    std::size_t d = 0;
    while (i < dims.size() && dims[i] >= '0' && dims[i] <= '9') {
      if (d > max_elements) return;  // larger than anything accepted
      d = d * 10 + static_cast<std::size_t>(dims[i++] - '0');
    }
    shape.push_back(d);
  }
  if (shape != a.shape) violated("shape differs from the header's");
  const std::size_t n = a.values.size();
  const std::string_view data = bytes.substr(bytes.size() - 4 * n);
  // C-order index k -> its multi-index -> Fortran offset (first axis fastest).
  std::vector<std::size_t> index(shape.size());
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t offset = k;
    if (fortran) {
      std::size_t rest = k;
      for (std::size_t j = shape.size(); j-- > 0;) {
        index[j] = rest % shape[j];
        rest /= shape[j];
      }
      offset = 0;
      std::size_t stride = 1;
      for (std::size_t j = 0; j < shape.size(); ++j) {
        offset += index[j] * stride;
        stride *= shape[j];
      }
    }
    std::uint32_t word = 0;
    for (int b = 0; b < 4; ++b) {
      const auto byte = static_cast<std::uint32_t>(static_cast<unsigned char>(data[4 * offset + static_cast<std::size_t>(b)]));
      word |= byte << (8 * (big ? 3 - b : b));
    }
    const double want = static_cast<double>(std::bit_cast<float>(word));
    const double got = a.values[k];
    if (std::isnan(want) ? !std::isnan(got) : std::bit_cast<std::uint64_t>(want) != std::bit_cast<std::uint64_t>(got))
      violated("float32 element differs from the independent decoder");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  lx::NpyArray a;
  try {
    a = lx::parse_npy(bytes, "fuzz.npy", max_elements);
  } catch (const lplab::runtime::UsageError& e) {
    if (std::strncmp(e.what(), "fuzz.npy: ", 10) != 0) violated("message does not start with the file's name");
    return 0;
  }
  // 1. Sizes: the product of the shape, and a data section that ends the input.
  std::size_t count = 1;
  for (std::size_t d : a.shape) count *= d;  // <= max_elements once accepted
  if (a.values.size() != count) violated("values.size() != product(shape)");
  // (numpy's int8 and uint8, '|i1' and '|u1', are lplab's formats of those names.)
  const std::size_t width = a.dtype == "float16" ? 2 : a.dtype == "float32" ? 4 : a.dtype == "float64" ? 8
                            : a.dtype == "int8" || a.dtype == "uint8"                               ? 1
                                                                                                    : 0;
  if (width == 0) violated("dtype is not float16, float32, float64, int8 or uint8");
  if (size < 10 || width * count > size) violated("data section larger than the input");
  // 2. Values: float32 against the independent decoder.
  if (a.dtype == "float32") check_float32(bytes, a);
  return 0;
}
