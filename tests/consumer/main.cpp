// Uses the installed headers: prints what fp16 and bf16 make of 1e-8 and what
// e4m3fn makes of 465, declares a format of its own, and converts a tensor
// with the bulk kernels.
#include <lplab/formats.h>
#include <lplab/kernels.h>

#include <cstdio>
#include <vector>

using float8_e3m4 = lplab::Float<lplab::Descriptor{
    .name = "float8_e3m4", .exponent_bits = 3, .mantissa_bits = 4, .bias = 3,
    .encoding = lplab::Encoding::ieee}>;

int main() {
  std::printf("fp16(1e-8)=%g bf16(1e-8)=%g e4m3fn(465)=0x%02x e3m4.max=%g\n",
              static_cast<double>(lplab::float16(1e-8f)), static_cast<double>(lplab::bfloat16(1e-8f)),
              lplab::float8_e4m3fn(465.0f).bits(), lplab::finfo<float8_e3m4>::max);
  const std::vector<float> x = {1.0f, 448.0f, 465.0f, 1e-8f};
  std::vector<lplab::float8_e4m3fn> y(x.size());
  lplab::kernels::FlagCounts counts;
  lplab::kernels::convert(x, y, lplab::kernels::ConvertOptions{.stats = &counts});
  std::printf("bulk e4m3: %02x %02x %02x %02x overflow=%llu underflow=%llu\n", y[0].bits(), y[1].bits(),
              y[2].bits(), y[3].bits(), static_cast<unsigned long long>(counts.overflow),
              static_cast<unsigned long long>(counts.underflow));
  return 0;
}
