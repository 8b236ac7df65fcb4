// Uses the installed headers: prints what fp16 and bf16 make of 1e-8 and what
// e4m3fn makes of 465, declares a format of its own, converts a tensor with
// the bulk kernels, and through the run-time layer names a format and a
// rounding at run time, converts by format id and reads a refusal.
#include <lplab/formats.h>
#include <lplab/kernels.h>
#include <lplab/runtime/formats.h>
#include <lplab/runtime/text.h>

#include <cstdint>
#include <cstdio>
#include <string>
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
  const lplab::runtime::FormatEntry& e4m3 = lplab::runtime::resolve_format("e4m3");
  std::vector<std::uint8_t> codes(x.size());
  lplab::kernels::bulk_convert(e4m3.id, lplab::kernels::FormatId::float32, x.data(), codes.data(), x.size(),
                               {.round = lplab::runtime::parse<lplab::Round>("rz")});
  std::printf("runtime %s max=%g rz: %02x %02x %02x %02x\n", std::string(e4m3.name).c_str(), e4m3.info.max, codes[0],
              codes[1], codes[2], codes[3]);
  try {
    lplab::runtime::parse<lplab::kernels::Unary>("rleu");
  } catch (const lplab::runtime::UsageError& error) {
    std::printf("%s\n", error.what());
  }
  return 0;
}
