// The .npy reader: xtensor's header parser and layout handling (Debian
// libxtensor-dev), behind checks for the traps of xtensor 0.24's reader:
//  - the header length is read from `char`s that are signed on x86, so a
//    length whose low byte is >= 128 is misread: the framing (magic,
//    version, length; NumPy's format.rst "Format Version 1.0/2.0") is read
//    here with unsigned bytes;
//  - an empty or unbraced header makes parse_header call back() on an empty
//    string, and a non-numeric dimension leaves it uninitialised: the
//    dictionary's shape is checked for digits before it is trusted;
//  - the element count is multiplied without an overflow check, and the
//    data read is never checked for a short file: the size is checked
//    against the file's length before anything is allocated.
#include "lplab/experiments/npy.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <xtensor/xarray.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "lplab/experiments/text.h"
#include "lplab/formats.h"

namespace lplab::experiments {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("{}: {}", path, why));
}

template <class U>
U byteswap_bits(U u) {
  U r = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) r = static_cast<U>((r << 8) | ((u >> (8 * i)) & 0xFF));
  return r;
}

// The element values in C order: U is the unsigned integer of the element's
// width, `swap` when the file's byte order is not the host's. A Fortran-order
// array is put into C order by xtensor (a column-major adaptor assigned to a
// row-major array).
template <class U>
std::vector<double> decode(std::istream& in, const std::vector<std::size_t>& shape, std::size_t count,
                           bool fortran, int width, bool swap) {
  std::vector<U> words(count);
  in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(count * sizeof(U)));
  if (!in) return {};
  if (fortran && shape.size() > 1) {
    xt::xarray<U, xt::layout_type::row_major> c = xt::adapt<xt::layout_type::column_major>(words, shape);
    words.assign(c.begin(), c.end());
  }
  std::vector<double> out;
  out.reserve(count);
  for (U u : words) {
    if (swap) u = byteswap_bits(u);
    if (width == 2) out.push_back(static_cast<double>(float16::from_bits(u)));
    else if (width == 4) out.push_back(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(u))));
    else out.push_back(std::bit_cast<double>(static_cast<std::uint64_t>(u)));
  }
  return out;
}

}  // namespace

NpyArray read_npy(const std::string& path, std::size_t max_elements) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "no such file");
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read its size");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open it");

  // 1. Framing: "\x93NUMPY", major, minor, then a little-endian header length
  //    of 2 bytes (1.0) or 4 bytes (2.0).
  unsigned char lead[10] = {};
  in.read(reinterpret_cast<char*>(lead), 8);
  if (in.gcount() != 8 || std::memcmp(lead, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file (bad magic string)");
  const int major = lead[6], minor = lead[7];
  if (!((major == 1 || major == 2) && minor == 0))
    fail(path, fmt::format("unsupported .npy format version {}.{} (1.0 and 2.0 are read)", major, minor));
  const int len_bytes = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char*>(lead + 8), 2);
  std::uint64_t header_len = lead[8] | (std::uint64_t{lead[9]} << 8);
  if (len_bytes == 4) {
    unsigned char hi[2] = {};
    in.read(reinterpret_cast<char*>(hi), 2);
    header_len |= (std::uint64_t{hi[0]} << 16) | (std::uint64_t{hi[1]} << 24);
  }
  if (!in) fail(path, "truncated header");
  const std::uint64_t data_offset = 6 + 2 + static_cast<std::uint64_t>(len_bytes) + header_len;
  if (data_offset > file_size) fail(path, "truncated header");
  if (header_len > (1u << 20)) fail(path, "header longer than 1 MiB");
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in) fail(path, "truncated header");

  // 2. The dictionary, by xtensor's parser, once it has the braces and a
  //    shape of digits that the parser needs.
  static const std::regex shape_re(R"('shape'\s*:\s*\(\s*(\d+\s*,\s*)*(\d+\s*,?\s*)?\))");
  if (header.empty() || header.back() != '\n' || header.find('{') == std::string::npos ||
      header.find('}') == std::string::npos)
    fail(path, "malformed header (not a dictionary ending in a newline)");
  if (!std::regex_search(header, shape_re)) fail(path, "malformed header (shape is not a tuple of sizes)");
  std::string descr;
  bool fortran = false;
  std::vector<std::size_t> shape;
  try {
    xt::detail::parse_header(header, descr, &fortran, shape);
  } catch (const std::exception& e) {
    fail(path, fmt::format("malformed header ({})", e.what()));
  }

  // 3. The dtype: float16/32/64 in either byte order.
  const bool little = std::endian::native == std::endian::little;
  if (descr.size() != 3 || descr[1] != 'f' || (descr[2] != '2' && descr[2] != '4' && descr[2] != '8') ||
      (descr[0] != '<' && descr[0] != '>'))
    fail(path, fmt::format("dtype '{}' is not float16, float32 or float64", descr));
  const int width = descr[2] - '0';
  const bool swap = (descr[0] == '<') != little;

  // 4. The size, checked against the file before any allocation.
  std::uint64_t count = 1;
  for (std::size_t d : shape) {
    if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / d) fail(path, "shape too large");
    count *= d;
  }
  if (count > max_elements)
    fail(path, fmt::format("{} elements is more than the {} this command reads", count, max_elements));
  const std::uint64_t data_bytes = file_size - data_offset;
  if (count * static_cast<std::uint64_t>(width) != data_bytes)
    fail(path, fmt::format("shape needs {} bytes of data but the file has {} ({})",
                           count * static_cast<std::uint64_t>(width), data_bytes,
                           data_bytes < count * static_cast<std::uint64_t>(width) ? "truncated" : "trailing bytes"));

  // 5. The data, which follow the header directly.
  NpyArray out;
  out.shape = shape;
  out.dtype = width == 2 ? "float16" : width == 4 ? "float32" : "float64";
  const auto n = static_cast<std::size_t>(count);
  if (width == 2) out.values = decode<std::uint16_t>(in, shape, n, fortran, width, swap);
  else if (width == 4) out.values = decode<std::uint32_t>(in, shape, n, fortran, width, swap);
  else out.values = decode<std::uint64_t>(in, shape, n, fortran, width, swap);
  if (out.values.size() != n) fail(path, "truncated data");
  return out;
}

}  // namespace lplab::experiments
