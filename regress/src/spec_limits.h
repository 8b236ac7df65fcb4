// What spec_parse.cpp checks when it reads a matmul check and spec_run.cpp
// checks again once a file's header gives the sizes and the format: one
// definition for both.
#pragma once

#include <cstdint>
#include <string>

namespace lplab::experiments::spec_limits {

// More elements than this in one array, or in a matmul's operands and output
// together, is refused (the .npy reader's limit too).
inline constexpr double kMaxElements = 0x1p31;
// A matmul of more multiply-adds than this is refused: the emulated
// accumulators run on the CPU, and the fp64 reference costs as much again.
inline constexpr double kMaxMultiplyAdds = 0x1p36;

// The message for a matmul past those limits, or empty.
std::string matmul_size_error(std::uint64_t m, std::uint64_t n, std::uint64_t k);
// The bytes a matmul check's arrays take while it runs.
double matmul_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k);

}  // namespace lplab::experiments::spec_limits
