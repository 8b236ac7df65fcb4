// The baseline of matmul_bench: Eigen's fp32 GEMM built for the machine that
// runs the benchmark (-march=native), the best Eigen can do here.
#include <cstddef>

#include <Eigen/Core>

namespace bench {

void eigen_native_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto I = [](std::size_t v) { return static_cast<Eigen::Index>(v); };
  Eigen::Map<RowMajor>(c, I(m), I(n)).noalias() =
      Eigen::Map<const RowMajor>(a, I(m), I(k)) * Eigen::Map<const RowMajor>(b, I(k), I(n));
}

const char* eigen_native_isa() { return Eigen::SimdInstructionSetsInUse(); }

}  // namespace bench
