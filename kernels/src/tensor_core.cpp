// Accumulator::tensor_core: NVIDIA Hopper's tensor-core accumulation as the
// bit-level model of MMA-Sim (Xie, Wang, Yang & Yang, arXiv 2511.10909)
// describes wgmma, with DeepSeek-V3 (arXiv 2412.19437, section 3.3.2) for
// promotion. The arithmetic is the portable model of
// lplab/kernels/tensor_core_step.h (its header states the four steps);
// docs/tensor-core-model.md where each parameter comes from. Here: the
// parameters resolved for a problem, and the rows on threads.
#include "tensor_core.h"

#include "row_bands.h"

namespace lplab::kernels::detail {

// (The options were checked by check_matmul.)
}  // namespace lplab::kernels::detail
namespace lplab::kernels {
using namespace detail;

TensorCoreModel tensor_core_model(const MatmulProblem& p, const MatmulOptions& o) {
  const AccumulatorModel r = resolve_accumulator(o.accumulator, p.ra, p.rb);
  return {r.block, r.fraction_bits, r.result_bits, r.zero_exponent, r.promote_every, p.ra.emin, p.rb.emin};
}

}  // namespace lplab::kernels
namespace lplab::kernels::detail {


void accumulate_tensor_core(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  if (tensor_core_fast(p, tensor_core_model(p, o), out, o.threads)) return;
  for_problem_bands(p, o.threads, [&](const MatmulProblem& band, std::size_t first) {
    accumulate_tensor_core_reference(band, o, out + first * p.n);
  });
}

void accumulate_tensor_core_reference(const MatmulProblem& p, const MatmulOptions& o, double* out) {
  const TensorCoreModel model = tensor_core_model(p, o);
  for (std::size_t i = 0; i < p.m; ++i)
    for (std::size_t j = 0; j < p.n; ++j)
      out[i * p.n + j] = tensor_core::dot(model, p.a + i * p.k, p.b + j, p.n, p.k);
}

}  // namespace lplab::kernels::detail
