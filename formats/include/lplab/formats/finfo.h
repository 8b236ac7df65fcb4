// finfo<T>: the format's constants, every field of torch.finfo and of
// numpy/ml_dtypes finfo, plus what neither reports. All exact and constexpr.
#pragma once

#include <cstdint>

#include "lplab/formats/finfo_values.h"
#include "lplab/formats/value.h"

namespace lplab {

namespace detail {
template <class T>
constexpr double decode_value(std::uint64_t code) {
  return static_cast<double>(T::from_bits(code));
}
// The code of x rounded to nearest even, overflow as IEEE: T(x), as torch and
// ml_dtypes convert.
template <class T>
constexpr std::uint64_t nearest_code(double x) {
  return T(x).bits();
}
}  // namespace detail

template <class T>
struct finfo;

// Every field is read from `values`, which finfo_values (finfo_values.h)
// derives from the descriptor and the codes, the formulas and their sources
// beside it; the members are generated from LPLAB_FINFO_FIELDS.
template <Descriptor D>
struct finfo<Float<D>> {
 private:
  using T = Float<D>;
  using L = detail::Layout<D>;
  static constexpr std::uint64_t one_code = static_cast<std::uint64_t>(D.bias) << L::M;
  static_assert(D.encoding == Encoding::integer || detail::decode_value<T>(one_code) == 1.0,
                "finfo needs 1.0 to be representable");

 public:
  static constexpr const char* name = D.name.text;
  static constexpr Descriptor descriptor = D;
  static constexpr FinfoValues values =
      finfo_values(D, L::v, &detail::decode_value<T>, &detail::nearest_code<T>);

#define LPLAB_FINFO_STATIC_MEMBER(field, kind, doc) \
  static constexpr finfo_field_t<FinfoKind::kind> field = values.field;
  LPLAB_FINFO_FIELDS(LPLAB_FINFO_STATIC_MEMBER)
#undef LPLAB_FINFO_STATIC_MEMBER
};

}  // namespace lplab
