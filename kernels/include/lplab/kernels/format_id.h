// The run-time identity of a compiled format: FormatId names every format of
// the catalog (lplab/formats/catalog.h), in its order, and visit_format maps
// an id back to its C++ type -- the one place that does. The type-erased entry
// points (convert.h's bulk_convert, elementwise.h's Operand and Output, the
// matmul plans) and every backend (lplab/cuda.h) speak in these ids.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "lplab/formats.h"

namespace lplab::kernels {

// The formats the compiled kernels know: the catalog, in its order (float is
// float32).
enum class FormatId : int {
  none = -1,
#define LPLAB_KERNELS_FORMAT_ID(type, names, description) type,
  LPLAB_FORMAT_CATALOG(LPLAB_KERNELS_FORMAT_ID)
#undef LPLAB_KERNELS_FORMAT_ID
};
inline constexpr std::size_t format_count = lplab::all_formats::size;

// The id of a C++ type; FormatId::none for a type the kernels do not compile.
template <class T>
inline constexpr FormatId format_id = FormatId::none;
template <>
inline constexpr FormatId format_id<float> = FormatId::float32;
#define LPLAB_KERNELS_FORMAT_ID(type, names, description) \
  template <>                                             \
  inline constexpr FormatId format_id<lplab::type> = FormatId::type;
LPLAB_FORMAT_CATALOG(LPLAB_KERNELS_FORMAT_ID)
#undef LPLAB_KERNELS_FORMAT_ID

// Calls f(std::type_identity<T>{}) with T the C++ type of `id` (float for
// float32, as the kernels store it); std::invalid_argument for
// FormatId::none or a value outside the catalog.
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

}  // namespace lplab::kernels
