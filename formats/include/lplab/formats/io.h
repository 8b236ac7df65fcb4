// Text output (host only): the shortest decimal that reads back to the same
// code under round-to-nearest-even, and operator<<.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

#include "lplab/formats/limits.h"
#include "lplab/formats/ops.h"

namespace lplab {

template <Descriptor D>
std::string to_string(Float<D> x) {
  if (isnan(x)) return signbit(x) && D.encoding != Encoding::fnuz ? "-nan" : "nan";
  if (isinf(x)) return signbit(x) ? "-inf" : "inf";
  const double v = static_cast<double>(x);
  char buf[64];
  // %.17g always reads back; try fewer digits first. -0 prints as "-0".
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (Float<D>(std::strtod(buf, nullptr)).bits() == x.bits()) break;
  }
  return buf;
}

template <Descriptor D>
std::ostream& operator<<(std::ostream& os, Float<D> x) {
  return os << to_string(x);
}

}  // namespace lplab
