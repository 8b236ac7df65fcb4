// Test helper of ml_dtypes_live.py: reads raw float32 values (native byte
// order) from stdin, converts them into the named format with the bulk
// kernels (lplab::kernels::convert: nearest-even, IEEE overflow, on the SIMD
// target the machine dispatches to) and writes the codes to stdout, one
// storage element (1 or 2 bytes, native order) each.
//
//     convert_codes float8_e3m4 < in.f32 > out.codes
#include <cstdio>
#include <exception>
#include <span>
#include <type_traits>
#include <vector>

#include "lplab/runtime/formats.h"
#include "lplab/kernels/convert.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: convert_codes FORMAT < float32 values > codes\n");
    return 2;
  }
  try {
    const auto& format = lplab::runtime::resolve_format(argv[1]);
    lplab::runtime::require_compiled(format, "convert_codes");
    std::vector<float> in;
    float chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, sizeof(float), 4096, stdin)) > 0;) in.insert(in.end(), chunk, chunk + n);
    if (std::ferror(stdin)) throw std::runtime_error("cannot read stdin");
    lplab::runtime::visit_format(format, [&]<class T>(std::type_identity<T>) {
      std::vector<T> out(in.size());
      lplab::kernels::convert(std::span<const float>(in), std::span<T>(out));
      if (std::fwrite(out.data(), sizeof(T), out.size(), stdout) != out.size() || std::fflush(stdout) != 0)
        throw std::runtime_error("cannot write stdout");
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convert_codes: %s\n", e.what());
    return 1;
  }
  return 0;
}
