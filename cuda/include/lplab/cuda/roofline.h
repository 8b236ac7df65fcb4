// This GPU's roofline, measured: a device-to-device copy's bandwidth and
// cuBLASLt's GEMM throughput per operand type, timed with CUDA events
// (lplab report's GPU section, scripts/gpu.sh). About two seconds.
#pragma once

#include <string>
#include <vector>

#include "lplab/cuda.h"

namespace lplab::cuda {

struct MeasuredRoof {
  std::string dtype;       // "bf16", "fp16", "fp8 e4m3", "fp32"
  double flops = 0;        // the GEMM's FLOP/s (2 m n k per product)
  std::string how;         // "cuBLASLt 8192^3 GEMM, fp32 accumulation"
};

struct Roofline {
  Device device;
  double copy_bytes_per_s = 0;  // cudaMemcpy device to device of 1 GiB, bytes read plus written
  std::vector<MeasuredRoof> roofs;
};

// Measures device 0; std::runtime_error without one.
Roofline measure_roofline();

}  // namespace lplab::cuda
