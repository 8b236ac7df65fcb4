// The extension's side of arrays: a numpy (or any DLPack) array and a format
// name become an Operand the kernels take, new outputs are numpy arrays that
// own their memory, and long kernels run in chunks without the GIL, with
// Ctrl-C noticed between chunks.
//
// An array's elements are a format's codes or values:
//   float32, float16, bfloat16 and the float8 DLPack dtypes name their format
//   themselves; float64 is double (an input only: it is rounded once);
//   unsigned (or signed) integers of a format's storage width are its codes,
//   and need the format named (the Python layer names it for lplab.Array and
//   ml_dtypes arrays, whose bits it passes as unsigned views).
// Storage: float32 as float, a format of at most 8 bits in one byte, 16 bits
// in two, a declared format of more in four or eight.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lplab/runtime/formats.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/view.h"

namespace lplab::python {

namespace nb = nanobind;
using runtime::FormatEntry;
using kernels::FormatId;

// Any array on the CPU, read-only accepted.
using InArray = nb::ndarray<nb::ro, nb::device::cpu>;
using OutArray = nb::ndarray<nb::numpy>;
// A writable array the caller gives for a result.
using OutParam = nb::ndarray<nb::device::cpu>;

struct Operand {
  const FormatEntry* format = nullptr;  // nullptr: float64
  const void* data = nullptr;
  std::vector<std::size_t> shape;
  std::vector<std::ptrdiff_t> strides;  // in elements, non-negative
  std::size_t size = 1;

  bool is_double() const { return format == nullptr; }
  bool compiled() const { return format != nullptr && format->declared == nullptr; }
  bool contiguous() const { return layout().is_contiguous(); }
  kernels::Layout layout() const { return kernels::Layout(shape, strides); }
  FormatId id() const;
};

// A function of the package's public face: bound here as _lplab.NAME and
// re-exported by lplab/__init__.py as lplab.NAME (it reads _lplab._public),
// so that binding a run-time function that needs no Python wrapper is this
// one call in one file of python/src.
template <class Func, class... Extra>
void def_public(nb::module_& m, const char* name, Func&& f, const Extra&... extra) {
  m.def(name, std::forward<Func>(f), extra...);
  if (!nb::hasattr(m, "_public")) m.attr("_public") = nb::list();
  nb::list(m.attr("_public")).append(nb::str(name));
}

// The format called `name` (every name the tool takes, groups refused): a
// ValueError with the tool's message otherwise.
const FormatEntry& format_named(std::string_view name);
// The same, the last name's entry remembered (a call's time; the GIL held).
const FormatEntry& format_named_cached(std::string_view name);
// The catalog entry of float32.
const FormatEntry& float32_entry();
FormatId format_id(const FormatEntry& e);
// Bytes a code of the format takes in an array.
std::size_t storage_bytes(const FormatEntry& e);
// The numpy dtype of a format's codes (float32 for float32).
nb::dlpack::dtype storage_dtype(const FormatEntry& e);

// An array's memory as operand() and output() read it: from nanobind's
// ndarray (which imports a numpy array through __dlpack__: a capsule and two
// allocations, most of a small call's time) or from the buffer protocol
// (BufferArray, for the calls whose overhead is measured).
struct ArrayRef {
  nb::dlpack::dtype dtype{};
  std::size_t ndim = 0;
  const std::int64_t* shape = nullptr;
  const std::int64_t* strides = nullptr;  // in elements
  void* data = nullptr;
  std::size_t size() const;
  std::size_t nbytes() const { return size() * ((dtype.bits + 7) / 8); }
};
template <class... Args>
ArrayRef ref_of(const nb::ndarray<Args...>& a) {
  return ArrayRef{a.dtype(), a.ndim(), a.shape_ptr(), a.stride_ptr(), const_cast<void*>(static_cast<const void*>(a.data()))};
}

// A numpy (or other buffer-protocol) array's memory, read through the
// buffer protocol when its dtype is a plain one (float16/32/64, integers,
// bool) in native byte order with strides a multiple of its item size; ok()
// false otherwise (ml_dtypes' dtypes, for one), and no Python error is left
// set: the caller then takes nanobind's ndarray.
class BufferArray {
 public:
  BufferArray(nb::handle h, bool writable);
  ~BufferArray();
  BufferArray(const BufferArray&) = delete;
  BufferArray& operator=(const BufferArray&) = delete;
  bool ok() const { return ok_; }
  ArrayRef ref() const { return ArrayRef{dtype_, ndim_, shape_, strides_, view_.buf}; }

 private:
  Py_buffer view_{};
  bool held_ = false, ok_ = false;
  nb::dlpack::dtype dtype_{};
  std::size_t ndim_ = 0;
  std::int64_t shape_[64], strides_[64];  // ndim_ of each set (not zeroed: a call's time)
};

// `what` names the argument in messages ("x", "a").
Operand operand(const ArrayRef& a, std::string_view format, const char* what);
inline Operand operand(const InArray& a, std::string_view format, const char* what) {
  return operand(ref_of(a), format, what);
}
// A new C-contiguous numpy array of `shape`, uninitialised.
OutArray new_array(nb::dlpack::dtype dtype, const std::vector<std::size_t>& shape);
OutArray new_codes(const FormatEntry& e, const std::vector<std::size_t>& shape);
// `out` checked as the result of rounding `in` into `e`: e's storage dtype,
// in's shape, C-contiguous, not overlapping in; its data.
void* output(const ArrayRef& out, const FormatEntry& e, const Operand& in, const char* what);
inline void* output(const OutParam& out, const FormatEntry& e, const Operand& in, const char* what) {
  return output(ref_of(out), e, in, what);
}
inline void* data_of(OutArray& a) { return a.data(); }

// lplab.convert's common call (convert.cpp: convert_new) through numpy's C
// API: x, where it is a numpy array (not a subclass) of float16, float32 or
// float64 in native byte order, aligned, as a ref (its strides in elements
// written to `strides`; false otherwise); a new C-contiguous numpy array of
// like's shape and e's storage dtype; its memory; and the package's Array of
// those codes in e (the class set by lplab._arrays through _set_array_class).
bool numpy_floats(nb::handle x, ArrayRef& ref, std::int64_t (&strides)[64]);
nb::object new_result_array(const FormatEntry& e, const ArrayRef& like);
void* result_data(nb::handle array);
nb::object new_package_array(nb::object codes, const FormatEntry& e);
void set_package_array_class(nb::handle cls);

// Rounds every element of `in` into `to`, written row-major and contiguous
// at `out` (convert.cpp: the kernels' path for the pair and layout).
void convert_into(const Operand& in, const FormatEntry& to, void* out, const kernels::ConvertOptions& o);

// The argument's message: "x: ..." as a ValueError.
[[noreturn]] void value_error(const std::string& message);

// The catalog name of the compiled format T.
template <class T>
std::string name_of() {
  return std::string(runtime::formats()[catalog_index<T>()].name);
}

// A float32 input, any layout: its values in row-major order (a view when
// contiguous, else a copy); ValueError for another dtype.
struct FloatInput {
  Operand op;
  std::vector<float> copy;
  std::span<const float> values() const {
    return copy.empty() ? std::span<const float>(static_cast<const float*>(op.data), op.size)
                        : std::span<const float>(copy);
  }
};
FloatInput float_input(const InArray& x, const char* what);

// Contiguous codes of `format`, n of them (ValueError otherwise): their data.
const void* contiguous_codes(const InArray& a, std::string_view format, const char* what, std::size_t n);
template <class T>
std::span<const T> codes_input(const InArray& a, const char* what, std::size_t n) {
  return {static_cast<const T*>(contiguous_codes(a, name_of<T>(), what, n)), n};
}

// The element count of a shape (ValueError where it overflows).
std::size_t element_count(const std::vector<std::size_t>& shape);

// Elements per chunk of a long kernel: a few milliseconds of work, so that
// Ctrl-C is noticed promptly and the GIL is given back between chunks.
inline constexpr std::size_t kChunk = std::size_t{1} << 22;

// Elements per chunk of a conversion of n elements into codes of out_bytes:
// kChunk, or where the whole output is one the kernels stream
// (kernels::streaming_output_bytes()), enough that every chunk's is too.
inline std::size_t conversion_chunk(std::size_t n, std::size_t out_bytes) {
  const std::size_t streamed = kernels::streaming_output_bytes();
  if (n * out_bytes < streamed) return kChunk;
  return std::max(kChunk, (streamed + out_bytes - 1) / out_bytes);
}

// Elements below which a call keeps the GIL: giving it back and taking it
// again costs more than the work (a few microseconds at most).
inline constexpr std::size_t kKeepGil = 4096;

// body(begin, end) over [0, n) in chunks of `chunk`, without the GIL (with
// it below kKeepGil elements); between chunks, a pending signal (Ctrl-C)
// raises its Python exception.
template <class F>
void without_gil(std::size_t n, F&& body, std::size_t chunk = kChunk) {
  if (n < kKeepGil) {
    body(std::size_t{0}, n);
    return;
  }
  std::size_t i = 0;
  do {
    const std::size_t end = std::min(n, i + chunk);
    {
      nb::gil_scoped_release release;
      body(i, end);
    }
    i = end;
    if (i < n && PyErr_CheckSignals() != 0) throw nb::python_error();
  } while (i < n);
}

// Parsers of the policy names (the tool's, aliases included).
Round round_named(std::string_view s);
Overflow overflow_named(std::string_view s);

// A block-scaled matmul operand, rows x k, K-major (A, or B transposed), as
// kernels::BlockScaledOperand holds it, decoded for the type-erased product
// (matmul.cpp): elements, scales and dequantized values as floats, and what
// the accumulators and the tensor-scale factor need (scaling.cpp).
struct ScaledOperand {
  std::size_t rows = 0, k = 0;
  std::vector<float> elems, scales, values;
  kernels::OperandRange elem_range, scaled_range;
  int block_size = 0;
  std::string scale_format;  // the scales' catalog format
  bool te = false;
  double encode_numerator = 1;
  float tensor_scale = 1;
};
ScaledOperand scaled_operand(const InArray& elems, const InArray& scales, const std::string& elem,
                             const std::string& scale, int block_size, const std::string& rule, bool tensor_scale,
                             float tensor_scale_value, const char* what, int block_rows = 1);

// The bindings, one function per file.
void bind_formats(nb::module_& m);
void bind_convert(nb::module_& m);
void bind_scaling(nb::module_& m);
void bind_integer_scaling(nb::module_& m);
void bind_elementwise(nb::module_& m);
void bind_matmul(nb::module_& m);
void bind_lab(nb::module_& m);

}  // namespace lplab::python
