// Arrays in and out of the extension (arrays.h).
#include "arrays.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <new>
#include <unordered_map>
#include <stdexcept>

#include "lplab/runtime/text.h"

// numpy's C API, in this file alone (convert_new's arrays).
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

namespace lplab::python {

namespace {

using Code = nb::dlpack::dtype_code;

// The format a DLPack dtype is itself, or nullptr (integers, float64, ...).
const FormatEntry* format_of_dtype(nb::dlpack::dtype t) {
  const auto code = static_cast<Code>(t.code);
  const char* name = nullptr;
  if (code == Code::Float && t.bits == 32) name = "float32";
  else if (code == Code::Float && t.bits == 16) name = "float16";
  else if (code == Code::Bfloat && t.bits == 16) name = "bfloat16";
  else if (code == Code::Int && t.bits == 8) name = "int8";  // numpy's int8 and uint8 are lplab's
  else if (code == Code::UInt && t.bits == 8) name = "uint8";
  else if (t.bits == 8) {
    switch (code) {
      case Code::Float8_E3M4: name = "float8_e3m4"; break;
      case Code::Float8_E4M3: name = "float8_e4m3"; break;
      case Code::Float8_E4M3B11FNUZ: name = "float8_e4m3b11fnuz"; break;
      case Code::Float8_E4M3FN: name = "float8_e4m3fn"; break;
      case Code::Float8_E4M3FNUZ: name = "float8_e4m3fnuz"; break;
      case Code::Float8_E5M2: name = "float8_e5m2"; break;
      case Code::Float8_E5M2FNUZ: name = "float8_e5m2fnuz"; break;
      case Code::Float8_E8M0FNU: name = "float8_e8m0fnu"; break;
      default: break;
    }
  }
  return name != nullptr ? &format_named(name) : nullptr;
}

std::string dtype_text(nb::dlpack::dtype t) {
  const char* kind = "?";
  switch (static_cast<Code>(t.code)) {
    case Code::Int: kind = "int"; break;
    case Code::UInt: kind = "uint"; break;
    case Code::Float: kind = "float"; break;
    case Code::Bfloat: kind = "bfloat"; break;
    case Code::Complex: kind = "complex"; break;
    case Code::Bool: return "bool";
    default: return fmt::format("DLPack type code {} of {} bits", t.code, t.bits);
  }
  return fmt::format("{}{}{}", kind, t.bits, t.lanes > 1 ? fmt::format("x{}", t.lanes) : "");
}

}  // namespace

void value_error(const std::string& message) { throw std::invalid_argument(message); }

const FormatEntry& format_named(std::string_view name) { return runtime::resolve_format(name); }

const FormatEntry& format_named_cached(std::string_view name) {
  // (The GIL serialises callers; an entry's address is fixed for the process.)
  static std::string last;
  static const FormatEntry* entry = nullptr;
  if (entry == nullptr || name != last) {
    const FormatEntry* found = &format_named(name);  // (may throw: nothing changed)
    last = name;
    entry = found;
  }
  return *entry;
}

const FormatEntry& float32_entry() { return runtime::formats()[0]; }

FormatId format_id(const FormatEntry& e) {
  return e.id;
}

FormatId Operand::id() const { return format == nullptr ? FormatId::none : format_id(*format); }

std::size_t storage_bytes(const FormatEntry& e) {
  if (format_id(e) == FormatId::float32) return 4;
  const int bits = e.info.bits;
  return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
}

nb::dlpack::dtype storage_dtype(const FormatEntry& e) {
  if (format_id(e) == FormatId::float32) return nb::dtype<float>();
  switch (storage_bytes(e)) {
    case 1: return nb::dtype<std::uint8_t>();
    case 2: return nb::dtype<std::uint16_t>();
    case 4: return nb::dtype<std::uint32_t>();
    default: return nb::dtype<std::uint64_t>();
  }
}

std::size_t ArrayRef::size() const {
  std::size_t n = 1;
  for (std::size_t d = 0; d < ndim; ++d) n *= static_cast<std::size_t>(shape[d]);
  return n;
}

namespace {
// A buffer's struct-module format as a DLPack dtype: one letter, after an
// optional native or little-endian mark ('@', '=', '<' on this little-endian
// host); none for anything else.
bool dtype_of_format(const char* f, std::size_t itemsize, nb::dlpack::dtype& t) {
  if (f == nullptr) return false;
  if (*f == '@' || *f == '=' || *f == '<') ++f;
  if (f[0] == '\0' || f[1] != '\0') return false;
  const auto bits = static_cast<std::uint8_t>(8 * itemsize);
  switch (f[0]) {
    case 'e': case 'f': case 'd': t = {static_cast<std::uint8_t>(Code::Float), bits, 1}; return true;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N':
      t = {static_cast<std::uint8_t>(Code::UInt), bits, 1}; return true;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n':
      t = {static_cast<std::uint8_t>(Code::Int), bits, 1}; return true;
    case '?': t = {static_cast<std::uint8_t>(Code::Bool), bits, 1}; return true;
    default: return false;
  }
}
}  // namespace

BufferArray::BufferArray(nb::handle h, bool writable) {
  static_assert(sizeof(Py_ssize_t) == sizeof(std::int64_t));
  const int flags = writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO;
  if (!PyObject_CheckBuffer(h.ptr()) || PyObject_GetBuffer(h.ptr(), &view_, flags) != 0) {
    PyErr_Clear();
    return;
  }
  held_ = true;
  const auto item = static_cast<std::size_t>(view_.itemsize);
  if (view_.ndim < 0 || view_.ndim > 64 || item == 0 || !dtype_of_format(view_.format, item, dtype_)) return;
  ndim_ = static_cast<std::size_t>(view_.ndim);
  for (std::size_t d = 0; d < ndim_; ++d) {
    shape_[d] = view_.shape[d];
    const std::int64_t bytes = view_.strides[d];
    if (bytes % static_cast<std::int64_t>(item) != 0) return;
    strides_[d] = bytes / static_cast<std::int64_t>(item);
  }
  ok_ = true;
}

BufferArray::~BufferArray() {
  if (held_) PyBuffer_Release(&view_);
}

Operand operand(const ArrayRef& a, std::string_view format, const char* what) {
  Operand op;
  const nb::dlpack::dtype t = a.dtype;
  if (t.lanes != 1) value_error(fmt::format("{}: vector dtype {} is not supported", what, dtype_text(t)));
  const auto code = static_cast<Code>(t.code);
  const std::size_t itemsize = (t.bits + 7) / 8;
  if (format.empty()) {
    if (code == Code::Float && t.bits == 64) {
      op.format = nullptr;
    } else if (const FormatEntry* f = format_of_dtype(t)) {
      op.format = f;
    } else if (code == Code::UInt || code == Code::Int) {
      value_error(fmt::format("{}: {} codes need their format: lplab.Array(codes, \"float8_e4m3fn\") or format=...",
                              what, dtype_text(t)));
    } else {
      value_error(fmt::format("{}: dtype {} is not float32, float64 or an lplab format", what, dtype_text(t)));
    }
  } else {
    const FormatEntry& f = format_named(format);
    const FormatEntry* own = format_of_dtype(t);
    const bool codes = (code == Code::UInt || code == Code::Int) && itemsize == storage_bytes(f) &&
                       format_id(f) != FormatId::float32;
    if (own != &f && !codes)
      value_error(format_id(f) == FormatId::float32
                      ? fmt::format("{}: a {} array is not float32", what, dtype_text(t))
                      : fmt::format("{}: a {} array cannot hold {} codes ({}-byte unsigned integers)", what,
                                    dtype_text(t), f.name, storage_bytes(f)));
    op.format = &f;
  }
  if (a.ndim > kernels::kMaxRank)
    value_error(fmt::format("{}: {} dimensions; lplab takes at most {}", what, a.ndim, kernels::kMaxRank));
  op.data = a.data;
  for (std::size_t d = 0; d < a.ndim; ++d) {
    if (a.strides[d] < 0)
      value_error(fmt::format("{}: negative strides (a reversed view) are not supported; pass a copy "
                              "(numpy.ascontiguousarray)", what));
    op.shape.push_back(static_cast<std::size_t>(a.shape[d]));
    op.strides.push_back(static_cast<std::ptrdiff_t>(a.strides[d]));
    op.size *= static_cast<std::size_t>(a.shape[d]);
  }
  return op;
}

OutArray new_array(nb::dlpack::dtype dtype, const std::vector<std::size_t>& shape) {
  // The element count and the bytes, checked: a shape whose product
  // overflows (a broadcast of two huge stride-0 views) is refused, never
  // allocated short.
  const std::size_t item = (dtype.bits + 7) / 8;
  std::size_t n = 1;
  bool zero = false;
  for (std::size_t s : shape) zero |= s == 0;
  for (std::size_t s : shape)
    if (!zero && (__builtin_mul_overflow(n, s, &n) || n > static_cast<std::size_t>(PTRDIFF_MAX) / item))
      value_error(fmt::format("a result of shape {} does not fit in memory", kernels::shape_text(shape)));
  if (zero) n = 0;
  const std::size_t bytes = std::max<std::size_t>(1, n * item);
  // Large results on transparent huge pages, as numpy allocates them: a
  // 64 MiB result is 32 page faults instead of 16384 (on a VM here, the
  // faults of 4 KiB pages cost more than the conversion that fills them).
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  void* p = nullptr;
  if (bytes >= 2 * kHuge) {
    if (posix_memalign(&p, kHuge, bytes) != 0) p = nullptr;
    if (p != nullptr) madvise(p, (bytes + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);  // advice only
  } else {
    p = std::malloc(bytes);
  }
  if (p == nullptr) throw std::bad_alloc();
  nb::capsule owner(p, [](void* q) noexcept { std::free(q); });
  return OutArray(p, shape.size(), shape.data(), owner, nullptr, dtype);
}

namespace {

// The package's Array class and its slots' names, kept for the process (no
// destructor runs at exit, when Python is gone).
struct PackageObjects {
  PyObject* array_class = nullptr;
  PyObject* codes_name = nullptr;
  PyObject* format_name = nullptr;
  std::unordered_map<const FormatEntry*, PyObject*> names;  // each format's name, made once
};

PackageObjects& package_objects() {
  static PackageObjects* p = [] {
    if (PyArray_ImportNumPyAPI() < 0) throw nb::python_error();
    auto* o = new PackageObjects;
    o->codes_name = PyUnicode_InternFromString("codes");
    o->format_name = PyUnicode_InternFromString("format");
    return o;
  }();
  return *p;
}

}  // namespace

void set_package_array_class(nb::handle cls) {
  if (!PyType_Check(cls.ptr())) throw nb::type_error("_set_array_class: a class");
  PackageObjects& o = package_objects();
  Py_XDECREF(o.array_class);
  o.array_class = nb::borrow(cls).release().ptr();
}

static_assert(NPY_MAXDIMS <= 64);

bool numpy_floats(nb::handle x, ArrayRef& ref, std::int64_t (&strides)[64]) {
  package_objects();  // numpy's API imported
  if (!PyArray_CheckExact(x.ptr())) return false;
  auto* a = reinterpret_cast<PyArrayObject*>(x.ptr());
  const int type = PyArray_TYPE(a);
  if ((type != NPY_FLOAT && type != NPY_DOUBLE && type != NPY_HALF) || !PyArray_ISNOTSWAPPED(a) ||
      !PyArray_ISALIGNED(a))
    return false;
  const auto item = static_cast<npy_intp>(PyArray_ITEMSIZE(a));
  const int nd = PyArray_NDIM(a);
  for (int i = 0; i < nd; ++i) {
    if (PyArray_STRIDES(a)[i] % item != 0) return false;
    strides[i] = PyArray_STRIDES(a)[i] / item;
  }
  static_assert(sizeof(npy_intp) == sizeof(std::int64_t));
  ref = ArrayRef{nb::dlpack::dtype{static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float),
                                   static_cast<std::uint8_t>(8 * item), 1},
                 static_cast<std::size_t>(nd), reinterpret_cast<const std::int64_t*>(PyArray_DIMS(a)), strides,
                 PyArray_DATA(a)};
  return true;
}

nb::object new_result_array(const FormatEntry& e, const ArrayRef& like) {
  package_objects();
  const int type = format_id(e) == FormatId::float32 ? NPY_FLOAT32
                   : storage_bytes(e) == 1           ? NPY_UINT8
                   : storage_bytes(e) == 2           ? NPY_UINT16
                   : storage_bytes(e) == 4           ? NPY_UINT32
                                                     : NPY_UINT64;
  PyObject* r = PyArray_SimpleNew(static_cast<int>(like.ndim), const_cast<npy_intp*>(reinterpret_cast<const npy_intp*>(like.shape)), type);
  if (r == nullptr) throw nb::python_error();
  return nb::steal(r);
}

void* result_data(nb::handle array) { return PyArray_DATA(reinterpret_cast<PyArrayObject*>(array.ptr())); }

nb::object new_package_array(nb::object codes, const FormatEntry& e) {
  PackageObjects& o = package_objects();
  if (o.array_class == nullptr) throw std::logic_error("convert_new: lplab._arrays has not set the Array class");
  PyObject*& name = o.names[&e];
  if (name == nullptr) name = PyUnicode_FromStringAndSize(e.name.data(), static_cast<Py_ssize_t>(e.name.size()));
  if (name == nullptr) throw nb::python_error();
  auto* cls = reinterpret_cast<PyTypeObject*>(o.array_class);
  nb::object a = nb::steal(cls->tp_alloc(cls, 0));
  if (!a.is_valid()) throw nb::python_error();
  if (PyObject_SetAttr(a.ptr(), o.codes_name, codes.ptr()) != 0 || PyObject_SetAttr(a.ptr(), o.format_name, name) != 0)
    throw nb::python_error();
  return a;
}

void* output(const ArrayRef& out, const FormatEntry& e, const Operand& in, const char* what) {
  if (out.dtype != storage_dtype(e))
    value_error(fmt::format("{}: {} codes are {}, not {}", what, e.name, dtype_text(storage_dtype(e)),
                            dtype_text(out.dtype)));
  bool same = out.ndim == in.shape.size();
  std::int64_t stride = 1;
  for (std::size_t d = out.ndim; same && d-- > 0;) {
    same = static_cast<std::size_t>(out.shape[d]) == in.shape[d] && (out.shape[d] == 1 || out.strides[d] == stride);
    stride *= out.shape[d];
  }
  if (!same) value_error(fmt::format("{}: a C-contiguous array of shape {} (x's)", what, kernels::shape_text(in.shape)));
  // No overlap with the input: the kernels read and write in chunks.
  const std::size_t item_in = in.is_double() ? 8 : storage_bytes(*in.format);
  std::size_t extent = 1;
  for (std::size_t d = 0; d < in.shape.size(); ++d)
    extent += in.shape[d] == 0 ? 0 : (in.shape[d] - 1) * static_cast<std::size_t>(in.strides[d]);
  const auto* a0 = static_cast<const std::uint8_t*>(in.data);
  const auto* b0 = static_cast<const std::uint8_t*>(out.data);
  if (in.size != 0 && a0 < b0 + out.nbytes() && b0 < a0 + extent * item_in)
    value_error(fmt::format("{}: overlaps x", what));
  return out.data;
}

OutArray new_codes(const FormatEntry& e, const std::vector<std::size_t>& shape) {
  return new_array(storage_dtype(e), shape);
}

Round round_named(std::string_view s) { return runtime::parse_round(s); }
Overflow overflow_named(std::string_view s) { return runtime::parse_overflow(s); }

FloatInput float_input(const InArray& x, const char* what) {
  FloatInput in{operand(x, "", what), {}};
  if (in.op.format != &float32_entry())
    value_error(fmt::format("{}: scaling takes float32 values (convert first: lplab.convert(x, \"float32\"))", what));
  if (!in.op.contiguous()) {
    in.copy.resize(in.op.size);
    std::size_t i = 0;
    kernels::View<const float>(static_cast<const float*>(in.op.data), in.op.layout()).for_each([&](const float& v) {
      in.copy[i++] = v;
    });
  }
  return in;
}

const void* contiguous_codes(const InArray& a, std::string_view format, const char* what, std::size_t n) {
  const Operand op = operand(a, format, what);
  if (!op.contiguous()) value_error(fmt::format("{}: codes must be contiguous", what));
  if (op.size != n) value_error(fmt::format("{}: {} codes given, {} expected", what, op.size, n));
  return op.data;
}

std::size_t element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) value_error("shape: the element count overflows");
  return n;
}

}  // namespace lplab::python
