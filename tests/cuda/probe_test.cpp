// The hardware probe on the GPU in hand: every instruction it runs there
// must give the D codes of lplab's model (MMA-Sim 2.1.1's parameters), bit
// for bit, on random and adversarial operands -- the model checked against
// the silicon, not against itself. Without a GPU: SKIPPED, saying so; the
// instruction lists, which need no device, are checked everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "lplab/cuda/probe.h"
#include "lplab/kernels/mma.h"

namespace {

TEST(Probe, lists_the_instructions_it_runs_per_architecture) {
  const std::vector<std::string> hopper = lplab::cuda::probe_instructions(9, 0);
  EXPECT_EQ(std::count_if(hopper.begin(), hopper.end(), [](const std::string& s) { return s.find(".wgmma.") != s.npos; }), 12);
  EXPECT_NE(std::find(hopper.begin(), hopper.end(), "hopper.mma.m16n8k16.f32.bf16.bf16.f32"), hopper.end());
  for (const std::string& s : hopper) EXPECT_NE(lplab::kernels::find_mma_instruction(s), nullptr) << s;
  const std::vector<std::string> ampere = lplab::cuda::probe_instructions(8, 0);
  EXPECT_EQ(ampere.size(), 9u);  // no f64 m16n8 shapes, no wgmma before sm_90
  EXPECT_TRUE(lplab::cuda::probe_instructions(7, 0).empty());  // no kernel for Volta's m8n8k4
}

TEST(Probe, every_instruction_on_this_gpu_matches_its_model_bit_for_bit) {
  if (lplab::cuda::devices().empty()) GTEST_SKIP() << "no CUDA device: the probe compiled, not run";
  const lplab::cuda::ProbeReport r = lplab::cuda::probe({.tiles = 512, .seed = 7});
  std::cout << r.device.name << " (" << r.arch << "): " << r.cases.size() << " instructions\n";
  ASSERT_FALSE(r.cases.empty()) << "no instruction of " << r.arch << " has a probe kernel";
  for (const lplab::cuda::ProbeCase& c : r.cases) {
    std::cout << "  " << c.instruction << ": " << c.outputs << " outputs, " << c.differ << " differ, "
              << c.nan_payload << " NaN payloads\n";
    EXPECT_EQ(c.differ, 0u) << c.instruction << (c.examples.empty() ? "" : ": " + c.examples.front());
  }
}

}  // namespace
