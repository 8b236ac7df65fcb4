// Text output (host only): the exact value of a code, and operator<<.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

#include "lplab/formats/limits.h"
#include "lplab/formats/ops.h"

namespace lplab {

// The value of x, exactly: the shortest decimal that reads back as the same
// double, and every value of a format of up to 32 bits is a double. So e4m3fn
// 448 prints "448" (not the "4.5e+02" that would also round back to 448), and
// bfloat16(0.1f) prints "0.10009765625". -0 prints "-0".
//
// The text of a finite double: the shortest of %.1g ... %.17g that reads back.
inline std::string shortest_text(double v) {
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {  // %.17g always reads back
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

template <Descriptor D>
std::string to_string(Float<D> x) {
  if (isnan(x)) return signbit(x) && D.encoding != Encoding::fnuz ? "-nan" : "nan";
  if (isinf(x)) return signbit(x) ? "-inf" : "inf";
  return shortest_text(static_cast<double>(x));
}

template <Descriptor D>
std::ostream& operator<<(std::ostream& os, Float<D> x) {
  return os << to_string(x);
}

}  // namespace lplab
