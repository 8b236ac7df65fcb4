// Typed-test plumbing: the format lists, named after the formats themselves.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "lplab/formats.h"

namespace lplab::testing {

struct FormatNames {
  template <class T>
  static std::string GetName(int) {
    return T::descriptor.name.c_str();
  }
};

using AllFormats = ::testing::Types<float32, float16, bfloat16, float8_e4m3fn, float8_e5m2,
                                    float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu,
                                    float6_e2m3fn, float6_e3m2fn, float4_e2m1fn>;
using SmallFormats = ::testing::Types<float16, bfloat16, float8_e4m3fn, float8_e5m2,
                                      float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu,
                                      float6_e2m3fn, float6_e3m2fn, float4_e2m1fn>;
using ByteFormats = ::testing::Types<float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
                                     float8_e5m2fnuz, float8_e8m0fnu, float6_e2m3fn,
                                     float6_e3m2fn, float4_e2m1fn>;

template <class T>
constexpr std::uint64_t code_count() {
  return std::uint64_t{1} << finfo<T>::bits;
}

}  // namespace lplab::testing
