// Uses the installed headers: prints what fp16 and bf16 make of 1e-8 and what
// e4m3fn makes of 465, and declares a format of its own.
#include <lplab/formats.h>

#include <cstdio>

using float8_e3m4 = lplab::Float<lplab::Descriptor{
    .name = "float8_e3m4", .exponent_bits = 3, .mantissa_bits = 4, .bias = 3,
    .encoding = lplab::Encoding::ieee}>;

int main() {
  std::printf("fp16(1e-8)=%g bf16(1e-8)=%g e4m3fn(465)=0x%02x e3m4.max=%g\n",
              static_cast<double>(lplab::float16(1e-8f)), static_cast<double>(lplab::bfloat16(1e-8f)),
              lplab::float8_e4m3fn(465.0f).bits(), lplab::finfo<float8_e3m4>::max);
  return 0;
}
