// The hardware probe: runs the matrix-unit instructions of the GPU in hand
// (mma.sync, and wgmma on Hopper) on random and adversarial operands and
// compares every D bit for bit with lplab's model of that instruction
// (kernels::mma_chain, the MMA-Sim 2.1.1 presets of mma.h) -- the check
// MMA-Sim's authors ran on their GPUs, for any user with one.
//
//   lplab::cuda::ProbeReport r = lplab::cuda::probe({.tiles = 256});
//   for (const auto& c : r.cases) std::cout << c.instruction << ' ' << c.differ << '\n';
//
// Operands per tile, by the tile's index mod 4: random codes (finite),
// values of similar magnitude with random signs (cancellation), exponents
// spread over the accumulator's fraction width with zeros and subnormals
// (alignment and truncation), and the same with infinities and NaNs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lplab/cuda.h"

namespace lplab::cuda {

struct ProbeOptions {
  std::size_t tiles = 256;           // instruction executions per instruction (each m x n outputs)
  std::uint64_t seed = 1;
  std::vector<std::string> only;     // preset names (empty: every one this GPU runs)
  std::size_t max_examples = 3;      // differing outputs kept per instruction, in full
};

struct ProbeCase {
  std::string instruction;           // the preset's name, "hopper.mma.m16n8k16.f32.bf16.bf16.f32"
  std::string isa;                   // as PTX spells it
  std::size_t outputs = 0;           // D elements compared
  std::size_t differ = 0;            // D codes unlike the model's (NaN payloads apart)
  std::size_t nan_payload = 0;       // both NaN, other codes
  std::vector<std::string> examples; // the first differing outputs: operands, C, D, model
};

struct ProbeReport {
  Device device;
  std::string arch;                  // "hopper"
  std::vector<ProbeCase> cases;
  // The presets of this architecture the probe has no kernel for (tcgen05,
  // the block-scaled forms): listed, not run.
  std::vector<std::string> not_run;
};

// The instructions probe() runs on a device of compute capability major.minor.
std::vector<std::string> probe_instructions(int major, int minor);
// Runs them on device 0; std::runtime_error without a device,
// std::invalid_argument for a name in `only` it cannot run there.
ProbeReport probe(const ProbeOptions& options = {});

}  // namespace lplab::cuda
