// Calls f(std::type_identity<T>{}) with T the C++ type of a kernel FormatId:
// the one place that maps run-time format ids back to types.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "lplab/formats.h"
#include "lplab/kernels/convert.h"

namespace lplab::kernels::detail {

template <class F>
decltype(auto) visit_format(FormatId id, F&& f) {
  switch (id) {
    case FormatId::float32: return f(std::type_identity<float>{});
#define LPLAB_VISIT(name) \
  case FormatId::name: return f(std::type_identity<lplab::name>{});
    LPLAB_VISIT(float16)
    LPLAB_VISIT(bfloat16)
    LPLAB_VISIT(float8_e4m3fn)
    LPLAB_VISIT(float8_e5m2)
    LPLAB_VISIT(float8_e4m3fnuz)
    LPLAB_VISIT(float8_e5m2fnuz)
    LPLAB_VISIT(float8_e8m0fnu)
    LPLAB_VISIT(float6_e2m3fn)
    LPLAB_VISIT(float6_e3m2fn)
    LPLAB_VISIT(float4_e2m1fn)
#undef LPLAB_VISIT
    case FormatId::none: break;
  }
  throw std::invalid_argument("lplab::kernels: unknown format id " + std::to_string(static_cast<int>(id)));
}

// Bytes per element of a format's storage (one code per element).
inline std::size_t element_bytes(FormatId id) {
  return visit_format(id, [](auto t) { return sizeof(typename decltype(t)::type); });
}

}  // namespace lplab::kernels::detail
