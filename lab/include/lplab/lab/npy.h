// Values from a NumPy .npy file (the user's own tensors).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lplab/lab/vocabulary.h"

namespace lplab::experiments {

// The readers' default cap on elements (2^31), and the cap of a spec's inputs.
inline constexpr std::size_t kNpyMaxElements = std::size_t{1} << 31;

struct NpyArray {
  std::vector<std::size_t> shape;
  std::string dtype;           // "float16", "float32", "float64", or the raw data's format
  std::vector<double> values;  // every element, exactly, in C (row-major) order
};

// Reads a .npy file of float16, float32 or float64 (either byte order, C or
// Fortran order, format versions 1.0 and 2.0). Anything else -- a missing
// file, a bad magic string, an unknown dtype, a malformed header, a size
// that does not match the file's length, more than `max_elements` elements
// -- throws UsageError with one line naming the file and the reason, before
// the data is allocated.
//
// Raw data: ml_dtypes' arrays (bfloat16, float8_*, float6_*, float4_e2m1fn)
// are saved by np.save with a void descriptor ('<V2', '|V1'), which says
// only the element's width. `raw_format` names their format (the codes are
// read in little-endian byte order, as ml_dtypes writes them on x86 and Arm,
// one element per byte for formats of 8 bits or fewer); without it such a
// file is an error that says to name one. Given for a float16/32/64 file,
// it must name that file's own dtype.
NpyArray read_npy(const std::string& path, std::size_t max_elements = kNpyMaxElements,
                  const FormatEntry* raw_format = nullptr);

// What a .npy file's header says, checked as read_npy checks it (the framing,
// the dtype, the size against the file's length, at most `max_elements`),
// without reading or allocating the data: to know what reading it will take.
struct NpyHeader {
  std::vector<std::size_t> shape;
  std::string dtype;
  std::size_t count = 0;  // elements
  std::size_t width = 0;  // bytes per element
};
NpyHeader probe_npy(const std::string& path, std::size_t max_elements = kNpyMaxElements,
                    const FormatEntry* raw_format = nullptr);

// The same reader over the bytes of a whole .npy file already in memory;
// `name` stands for the file in the messages. read_npy is this with the
// file's bytes (it reads the header first, to check the sizes before it
// allocates the data).
NpyArray parse_npy(std::string_view bytes, const std::string& name,
                   std::size_t max_elements = kNpyMaxElements, const FormatEntry* raw_format = nullptr);

}  // namespace lplab::experiments
