// Bulk conversion over arrays, scalar path: the reference that SIMD bulk
// paths are proven against bit for bit.
#pragma once

#include <cstddef>

#include "lplab/formats.h"

namespace lplab::kernels {

template <Convertible To, Convertible From>
void convert_scalar(const From* in, To* out, std::size_t n, Round r = Round::nearest_even,
                    Overflow o = Overflow::ieee, Flags* flags = nullptr) {
  for (std::size_t i = 0; i < n; ++i) out[i] = convert<To>(in[i], r, o, flags);
}

}  // namespace lplab::kernels
