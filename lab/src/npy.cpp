// The .npy reader: the framing and header read here (NumPy's format.rst
// "Format Version 1.0/2.0"), xtensor's layout handling (Debian
// libxtensor-dev) for the data. xtensor 0.24's own reader has traps this
// one avoids:
//  - the header length is read from `char`s that are signed on x86, so a
//    length whose low byte is >= 128 is misread: lplab reads unsigned bytes;
//  - an empty or unbraced header makes its parse_header call back() on an
//    empty string, and a non-numeric dimension leaves it uninitialised:
//    lplab parses the dictionary itself, strictly (parse_dictionary);
//  - the element count is multiplied without an overflow check, and the
//    data read is never checked for a short file: the size is checked
//    against the file's length before anything is allocated.
#include "lplab/lab/npy.h"

#include "lplab/lab/files.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string_view>
#include <xtensor/xarray.hpp>
#include <xtensor/xadapt.hpp>

#include "lplab/lab/vocabulary.h"
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

// The element values in C order from the data section `data` (exactly
// count * sizeof(U) bytes): U is the unsigned integer of the element's width,
// `swap` when the file's byte order is not the host's. A Fortran-order array
// is put into C order by xtensor (a column-major adaptor assigned to a
// row-major array). Raw data (`raw` not null) are codes of that format; a
// code with bits above the format's width is refused, naming the element.
template <class U>
std::vector<double> decode(std::string_view data, const std::vector<std::size_t>& shape, std::size_t count,
                           bool fortran, int width, bool swap, const FormatEntry* raw, const std::string& path) {
  std::vector<U> words(count);
  if (data.size() != count * sizeof(U)) return {};
  if (count != 0) std::memcpy(words.data(), data.data(), data.size());
  if (fortran && shape.size() > 1) {
    xt::xarray<U, xt::layout_type::row_major> c = xt::adapt<xt::layout_type::column_major>(words, shape);
    words.assign(c.begin(), c.end());
  }
  std::vector<double> out;
  out.reserve(count);
  for (U u : words) {
    if (swap) u = byteswap_bits(u);
    if (raw != nullptr) {
      const std::uint64_t code = u;
      if (raw->info.bits < 64 && code >> raw->info.bits != 0)
        fail(path, fmt::format("element {} (C order) holds 0x{:x}, not a {} code ({} bits)", out.size(), code,
                               raw->name, raw->info.bits));
      out.push_back(raw->to_double(code));
    } else if (width == 2) out.push_back(static_cast<double>(float16::from_bits(u)));
    else if (width == 4) out.push_back(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(u))));
    else out.push_back(std::bit_cast<double>(static_cast<std::uint64_t>(u)));
  }
  return out;
}

// NumPy's name of a float of 2, 4 or 8 bytes.
std::string_view float_dtype(int width) { return width == 2 ? "float16" : width == 4 ? "float32" : "float64"; }

// What the header says about the data: where it starts and how to read it.
struct DataLayout {
  std::uint64_t offset = 0;  // of the data section, from the file's start
  std::vector<std::size_t> shape;
  std::uint64_t count = 0;  // elements
  int width = 0;            // bytes per element: 1 (raw only), 2, 4 or 8
  bool fortran = false;
  const FormatEntry* raw = nullptr;  // raw (void) data: their format
  bool swap = false;
};

// The longest prefix `describe` needs: the framing of a version 2.0 file
// (magic 6 + version 2 + length 4 bytes) and the longest header it accepts.
constexpr std::size_t max_header_bytes = std::size_t{1} << 20;  // 1 MiB
constexpr std::size_t max_prefix_bytes = 6 + 2 + 4 + max_header_bytes;

// The header's dictionary, e.g. "{'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }": each of the three keys once, a quoted typestring, True
// or False, a tuple of sizes (one-element tuples with their comma, as repr
// writes them, or without). Returns why it is not one, or "".
std::string parse_dictionary(std::string_view h, std::string& descr, bool& fortran, std::vector<std::size_t>& shape) {
  std::size_t i = 0;
  const auto space = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\n' || h[i] == '\t')) ++i;
  };
  const auto take = [&](char c) {
    space();
    if (i < h.size() && h[i] == c) return ++i, true;
    return false;
  };
  const auto quoted = [&](std::string& out) {
    space();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) return false;
    const char q = h[i++];
    const std::size_t end = h.find(q, i);
    if (end == std::string_view::npos) return false;
    out.assign(h.substr(i, end - i));
    i = end + 1;
    return true;
  };
  if (!take('{')) return "not a dictionary";
  bool has_descr = false, has_fortran = false, has_shape = false;
  while (!take('}')) {
    std::string key;
    if (!quoted(key) || !take(':')) return "expected 'key': value";
    space();
    if (key == "descr" && !has_descr) {
      if (!quoted(descr)) return "descr is not a quoted typestring";
      has_descr = true;
    } else if (key == "fortran_order" && !has_fortran) {
      if (h.substr(i, 4) == "True") fortran = true, i += 4;
      else if (h.substr(i, 5) == "False") fortran = false, i += 5;
      else return "fortran_order is not True or False";
      has_fortran = true;
    } else if (key == "shape" && !has_shape) {
      if (!take('(')) return "shape is not a tuple of sizes";
      shape.clear();
      while (!take(')')) {
        space();
        std::uint64_t d = 0;
        const std::size_t first = i;
        for (; i < h.size() && h[i] >= '0' && h[i] <= '9'; ++i) {
          if (d > (std::numeric_limits<std::uint64_t>::max() - 9) / 10) return "shape too large";
          d = d * 10 + static_cast<std::uint64_t>(h[i] - '0');
        }
        if (i == first) return "shape is not a tuple of sizes";
        shape.push_back(static_cast<std::size_t>(d));
        if (!take(',') && !(space(), i < h.size() && h[i] == ')')) return "shape is not a tuple of sizes";
      }
      has_shape = true;
    } else {
      return fmt::format("unexpected key '{}'", shown(key));
    }
    if (!take(',') && !(space(), i < h.size() && h[i] == '}')) return "expected ',' or '}'";
  }
  space();
  if (i != h.size()) return "text after the dictionary";
  if (!has_descr || !has_fortran || !has_shape)
    return fmt::format("missing '{}'", !has_descr ? "descr" : !has_fortran ? "fortran_order" : "shape");
  return "";
}

// Checks the framing and header at the start of `head` against a file of
// `file_size` bytes (head is the whole file, or at least its first
// max_prefix_bytes), and the data size against the file, before any of the
// data is read or allocated.
DataLayout describe(std::string_view head, std::uint64_t file_size, const std::string& path,
                    std::size_t max_elements, const FormatEntry* raw_format) {
  // 1. Framing: "\x93NUMPY", major, minor, then a little-endian header length
  //    of 2 bytes (1.0) or 4 bytes (2.0), read as unsigned bytes.
  auto byte = [&](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(head[i])); };
  if (head.size() < 8 || head.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    fail(path, "not a .npy file (bad magic string)");
  const int major = static_cast<int>(byte(6)), minor = static_cast<int>(byte(7));
  if (!((major == 1 || major == 2) && minor == 0))
    fail(path, fmt::format("unsupported .npy format version {}.{} (1.0 and 2.0 are read)", major, minor));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (head.size() < 8 + len_bytes) fail(path, "truncated header");
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) header_len |= byte(8 + i) << (8 * i);
  DataLayout l;
  l.offset = 6 + 2 + len_bytes + header_len;
  if (l.offset > file_size) fail(path, "truncated header");
  if (header_len > max_header_bytes) fail(path, "header longer than 1 MiB");
  if (l.offset > head.size()) fail(path, "truncated header");
  std::string header(head.substr(8 + len_bytes, header_len));

  // 2. The dictionary (NumPy's format.rst: the repr of a dict with the keys
  //    'descr', 'fortran_order' and 'shape', padded with spaces, ending in a
  //    newline), read by lplab's own strict parser.
  if (header.empty() || header.back() != '\n' || header.find('{') == std::string::npos ||
      header.find('}') == std::string::npos)
    fail(path, "malformed header (not a dictionary ending in a newline)");
  std::string descr;
  if (const std::string why = parse_dictionary(header, descr, l.fortran, l.shape); !why.empty())
    fail(path, fmt::format("malformed header ({})", why));
  // A void typestring ('<V2', written by np.save for ml_dtypes arrays) or
  // '<f1' (ml_dtypes 0.6's float8_e5m2) is raw data of a named format.
  static const std::regex raw_re(R"([<>|=]V\d+|[<>|]f1)");
  const std::string raw_descr = std::regex_match(descr, raw_re) ? descr : std::string();

  // 3. The dtype: float16/32/64 in either byte order, or raw data of the
  //    named format: a void descriptor ('<V2', '|V1') of its byte width.
  const bool little = std::endian::native == std::endian::little;
  //    ml_dtypes 0.6 saves float8_e5m2 as '<f1', which NumPy has no float
  //    for: raw one-byte data too (both recognised by raw_re above).
  //    NumPy's int8 and uint8 ('|i1', '|u1') are lplab's formats of those
  //    names: their bytes are the codes.
  if (descr == "|i1" || descr == "|u1") {
    const std::string_view own = descr == "|i1" ? "int8" : "uint8";
    if (raw_format != nullptr && raw_format->name != own)
      fail(path, fmt::format("holds {} values (dtype '{}'); a format given for the input names raw (void) data only",
                             own, descr));
    l.width = 1;
    l.raw = &runtime::resolve_format(own);
  } else if (!raw_descr.empty()) {
    const std::string width = descr.substr(2);
    if (raw_format == nullptr)
      fail(path, fmt::format("dtype '{}' is raw {}-byte data, as np.save writes ml_dtypes arrays (bfloat16, "
                             "float8_*, float4_e2m1fn): name their format with --input-dtype (in a spec: "
                             "{{path: FILE, dtype: FORMAT}})",
                             descr, width));
    const int need = (raw_format->info.bits + 7) / 8;
    if (width != std::to_string(need))
      fail(path, fmt::format("dtype '{}' holds {}-byte elements; {} codes take {} byte{}", descr, width,
                             raw_format->name, need, need == 1 ? "" : "s"));
    l.width = need;
    l.raw = raw_format;
    l.swap = !little;  // ml_dtypes writes the codes in the host's order: little-endian on x86 and Arm
  } else {
    if (descr.size() != 3 || descr[1] != 'f' || (descr[2] != '2' && descr[2] != '4' && descr[2] != '8') ||
        (descr[0] != '<' && descr[0] != '>'))
      fail(path, fmt::format("dtype '{}' is not float16, float32, float64, int8 or uint8 (nor raw ml_dtypes data, "
                             "'<V2' or '|V1')",
                             descr));
    l.width = descr[2] - '0';
    l.swap = (descr[0] == '<') != little;
    const std::string_view own = float_dtype(l.width);
    if (raw_format != nullptr && raw_format->name != own)
      fail(path, fmt::format("holds {} values (dtype '{}'); a format given for the input names raw (void) data only",
                             own, descr));
  }

  // 4. The size, checked against the file before any allocation. The product
  //    of the nonzero dimensions must fit too, even where a zero dimension
  //    makes the count 0: xtensor's strides are products of trailing
  //    dimensions in signed 64 bits (a shape (0, 4, 10^19) overflowed them).
  //    Below 2^61 elements, count * width cannot wrap either.
  constexpr std::uint64_t kMaxExtent = std::numeric_limits<std::uint64_t>::max() >> 3;  // 2^61 - 1
  std::uint64_t extent = 1;
  bool empty = false;
  for (std::size_t d : l.shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (extent > kMaxExtent / d) fail(path, "shape too large");
    extent *= d;
  }
  l.count = empty ? 0 : extent;
  if (l.count > max_elements)
    fail(path, fmt::format("{} elements is more than the {} this command reads", l.count, max_elements));
  const std::uint64_t data_bytes = file_size - l.offset;
  const std::uint64_t need = l.count * static_cast<std::uint64_t>(l.width);
  if (need != data_bytes)
    fail(path, fmt::format("shape needs {} bytes of data but the file has {} ({})", need, data_bytes,
                           data_bytes < need ? "truncated" : "trailing bytes"));
  return l;
}

// The dtype a layout reads: the raw data's format, or the float's name.
std::string dtype_name(const DataLayout& l) {
  return std::string(l.raw != nullptr ? l.raw->name : float_dtype(l.width));
}

// 5. The data, which follow the header directly.
NpyArray decode_data(const DataLayout& l, std::string_view data, const std::string& path) {
  NpyArray out;
  out.shape = l.shape;
  out.dtype = dtype_name(l);
  const auto n = static_cast<std::size_t>(l.count);
  const auto words = [&]<class U>(U) { return decode<U>(data, l.shape, n, l.fortran, l.width, l.swap, l.raw, path); };
  if (l.width == 1) out.values = words(std::uint8_t{});
  else if (l.width == 2) out.values = words(std::uint16_t{});
  else if (l.width == 4) out.values = words(std::uint32_t{});
  else out.values = words(std::uint64_t{});
  if (out.values.size() != n) fail(path, "truncated data");
  return out;
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& name, std::size_t max_elements,
                   const FormatEntry* raw_format) {
  const DataLayout l = describe(bytes, bytes.size(), name, max_elements, raw_format);
  return decode_data(l, bytes.substr(static_cast<std::size_t>(l.offset)), name);
}

namespace {

// The file opened and its header described (at most max_prefix_bytes read),
// so that the sizes are checked against the file before its data are
// allocated.
DataLayout open_npy(const std::string& path, std::size_t max_elements, const FormatEntry* raw_format,
                    std::ifstream& in) {
  require_input_file(path, "a .npy file");  // the real cause: no such file, a device, ...
  std::error_code ec;
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read its size");
  in.open(path, std::ios::binary);
  if (!in) fail(path, "cannot open it");
  std::string head(static_cast<std::size_t>(std::min<std::uintmax_t>(file_size, max_prefix_bytes)), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return describe(head, file_size, path, max_elements, raw_format);
}

}  // namespace

NpyHeader probe_npy(const std::string& path, std::size_t max_elements, const FormatEntry* raw_format) {
  std::ifstream in;
  const DataLayout l = open_npy(path, max_elements, raw_format, in);
  return {l.shape, dtype_name(l), static_cast<std::size_t>(l.count), static_cast<std::size_t>(l.width)};
}

NpyArray read_npy(const std::string& path, std::size_t max_elements, const FormatEntry* raw_format) {
  // The header first, then the data, the same bytes parse_npy decodes.
  std::ifstream in;
  const DataLayout l = open_npy(path, max_elements, raw_format, in);
  std::string data(static_cast<std::size_t>(l.count) * static_cast<std::size_t>(l.width), '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(l.offset));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (!in || static_cast<std::size_t>(in.gcount()) != data.size()) fail(path, "truncated data");
  return decode_data(l, data, path);
}

}  // namespace lplab::experiments
