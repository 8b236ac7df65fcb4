// Values from a NumPy .npy file (the user's own tensors).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lplab::experiments {

struct NpyArray {
  std::vector<std::size_t> shape;
  std::string dtype;           // "float16", "float32" or "float64"
  std::vector<double> values;  // every element, exactly, in C (row-major) order
};

// Reads a .npy file of float16, float32 or float64 (either byte order, C or
// Fortran order, format versions 1.0 and 2.0). Anything else -- a missing
// file, a bad magic string, an unknown dtype, a malformed header, a size
// that does not match the file's length, more than `max_elements` elements
// -- throws UsageError with one line naming the file and the reason, before
// the data is allocated.
NpyArray read_npy(const std::string& path, std::size_t max_elements = std::size_t{1} << 31);

}  // namespace lplab::experiments
