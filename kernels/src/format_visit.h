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
#define LPLAB_VISIT(type, names, description)                            \
  case FormatId::type:                                                    \
    if constexpr (std::is_same_v<lplab::type, lplab::float32>)            \
      return f(std::type_identity<float>{}); /* the kernels' float32 */   \
    else                                                                  \
      return f(std::type_identity<lplab::type>{});
    LPLAB_FORMAT_CATALOG(LPLAB_VISIT)
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
