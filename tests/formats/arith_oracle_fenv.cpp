// The literal round-to-odd route over a block (arith_oracle_block.h). This
// file alone is compiled with -frounding-math, so that the compiler keeps the
// operations under the rounding direction set here and between the flag
// calls; the test and lplab's code under test are compiled as usual.
#include "formats/arith_oracle_block.h"

namespace lplab::testing::oracle {

void ro_fenv_block(Op op, double a, const double* b, double* ro, std::size_t n) {
  RoundTowardZero rz;
  for (std::size_t i = 0; i < n; ++i) ro[i] = ro_fenv(op, a, b[i]);
}

}  // namespace lplab::testing::oracle
