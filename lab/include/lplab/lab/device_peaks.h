// Promised peaks of accelerators, from their vendors' spec sheets: one table
// that the accounting and roofline experiments share, each figure with its
// source. All figures are per GPU, dense (no 2:4 structured sparsity): the
// spec sheets print the sparse figure first, twice the dense one, marked
// "with sparsity" in a footnote.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lplab/lab/table.h"

namespace lplab::experiments {

struct DevicePeaks {
  std::string_view name;
  // Dense tensor-core peaks in FLOP/s; 0 where the device has no such unit.
  double bf16, fp8, fp4;
  double fp32;  // non-tensor fp32 (CUDA cores)
  double bandwidth;  // HBM bytes/s
  std::string_view source;
};

inline constexpr double kTera = 1e12;

inline constexpr std::array<DevicePeaks, 4> kDevices{{
    {"h100_sxm", 989 * kTera, 1979 * kTera, 0, 67 * kTera, 3.35 * kTera,
     "NVIDIA H100 Tensor Core GPU datasheet, SXM: BF16 1979 and FP8 3958 TFLOPS with sparsity, "
     "FP32 67 TFLOPS, 3.35 TB/s"},
    {"a100_sxm", 312 * kTera, 0, 0, 19.5 * kTera, 2.039 * kTera,
     "NVIDIA A100 datasheet, 80GB SXM: BF16 312 TFLOPS (624 with sparsity), FP32 19.5 TFLOPS, "
     "2039 GB/s; no FP8 units"},
    {"h200_sxm", 989 * kTera, 1979 * kTera, 0, 67 * kTera, 4.8 * kTera,
     "NVIDIA H200 datasheet, SXM: H100's compute (BF16 1979, FP8 3958 TFLOPS with sparsity), "
     "4.8 TB/s"},
    {"b200", 2250 * kTera, 4500 * kTera, 9000 * kTera, 75 * kTera, 8 * kTera,
     "NVIDIA HGX B200 per GPU: BF16 4.5, FP8 9, FP4 18 PFLOPS with sparsity, FP32 75 TFLOPS; "
     "8 TB/s (the B200's maximum; HGX B200's table lists 7.7 TB/s)"},
}};

// The roofs a device's spec sheet gives: one per unit, fp32 and bf16 on
// every device, fp8 and fp4 where it has them. The roofline experiment's
// table and the report's GPU section list these.
struct DeviceRoof {
  std::string_view device, dtype;
  double peak;  // FLOP/s
  double bandwidth;  // bytes/s
  std::string_view source;
};
// The columns of a table of roofs, one row per (device, dtype).
inline std::vector<Column> roof_columns() {
  return {{"device", ""},
          {"dtype", ""},
          {"peak_gflops", "GFLOP/s"},
          {"bandwidth_gbs", "GB/s"},
          {"ridge_flop_per_byte", "FLOP/byte"},
          {"source", ""}};
}
// A row of such a table: FLOP/s and bytes/s shown in GFLOP/s and GB/s.
inline std::vector<Cell> roof_cells(std::string device, std::string dtype, double peak, double bandwidth,
                                    std::string source) {
  return {std::move(device), std::move(dtype), peak / 1e9, bandwidth / 1e9, peak / bandwidth, std::move(source)};
}
inline std::vector<DeviceRoof> device_roofs() {
  std::vector<DeviceRoof> out;
  for (const DevicePeaks& d : kDevices) {
    out.push_back({d.name, "fp32", d.fp32, d.bandwidth, d.source});
    out.push_back({d.name, "bf16", d.bf16, d.bandwidth, d.source});
    if (d.fp8 > 0) out.push_back({d.name, "fp8", d.fp8, d.bandwidth, d.source});
    if (d.fp4 > 0) out.push_back({d.name, "fp4", d.fp4, d.bandwidth, d.source});
  }
  return out;
}

// The unit a device runs operands of `bits` bits on, named by its dtype:
// fp32 on CUDA cores, 16-bit on bf16/fp16 tensor cores, 8-bit on FP8 units
// where there are some, 4 and 6 bits on FP4 units (B200 runs FP6 at its FP8
// rate). A width the device has no unit for runs on the next wider one it
// has (an A100 upcasts FP8 to BF16): the name then differs from the dtype's,
// and a table that counts such work says so in its row.
inline std::string_view device_unit(const DevicePeaks& d, int bits) {
  if (bits > 16) return "fp32";
  if (bits > 8) return "bf16";
  if (bits > 4 || d.fp4 == 0) return d.fp8 != 0 ? "fp8" : "bf16";
  return "fp4";
}

// The dense peak of that unit, FLOP/s.
inline double device_peak(const DevicePeaks& d, int bits) {
  const std::string_view unit = device_unit(d, bits);
  if (unit == "fp32") return d.fp32;
  if (unit == "bf16") return d.bf16;
  if (unit == "fp8") return d.fp8;
  return d.fp4;
}

}  // namespace lplab::experiments
