// The CUDA backend: lplab's bulk conversions on a CUDA device, built from the
// same portable core (LPLAB_HD headers) as the CPU kernels.
//
//   for (const lplab::cuda::Device& d : lplab::cuda::devices()) ...
//   lplab::cuda::convert(std::span<const float>(x), std::span<lplab::float8_e4m3fn>(codes), options);
//   lplab::cuda::convert(std::span<const lplab::float8_e4m3fn>(codes), std::span<float>(y));
//
// Element i of a conversion into a format is
//   lplab::convert<To>(in[i], options.round, options.overflow, nullptr,
//                      kernels::stochastic_bits(options.seed, options.first_index + i))
// -- what lplab::kernels::convert computes on the CPU, bit for bit, for every
// catalog format and policy (tests/cuda/device_test.cu checks it on a device).
// Decoding a format into float is exact.
//
// Errors, before anything is written to `out`: std::invalid_argument for
// spans of different length or options.stats given (flags are counted on the
// CPU only); std::runtime_error naming the reason when there is no CUDA
// device (no GPU, no driver) or a CUDA call fails. options.threads does not
// apply. The arrays are copied to device 0 and back: this is the device
// path's reference API, not a zero-copy one.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"

namespace lplab::cuda {

struct Device {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};

// The CUDA devices this process can use. Empty where there are none, with
// the CUDA runtime's reason in *why when given.
std::vector<Device> devices(std::string* why = nullptr);

// float -> a catalog format, and a catalog format -> float, on device 0.
template <class To>
void convert(std::span<const float> in, std::span<To> out, const kernels::ConvertOptions& options = {});
template <class From>
void convert(std::span<const From> in, std::span<float> out, const kernels::ConvertOptions& options = {});

}  // namespace lplab::cuda
