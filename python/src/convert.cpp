// Conversions: lplab.convert / decode / pack / unpack.
//
// Paths, each bit-identical to the C++ API's call on the same values:
//   compiled -> compiled, contiguous: kernels::bulk_convert (the SIMD
//     kernels of kernels::convert), in chunks whose first_index keeps the
//     stochastic bits of the whole array;
//   compiled -> compiled, strided, no flags: the elementwise cast
//     (kernels::map_unary with the identity), which walks any strides in place;
//   float64 input or a declared format: the scalar core, element by element
//     (FormatEntry::from_double: one rounding of the exact value).
// A strided input that needs flags or the scalar core is gathered first.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstring>
#include <optional>
#include <fmt/format.h>

#include "arrays.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/packed.h"
#include "lplab/kernels/random.h"

namespace lplab::python {

namespace {

// A strided operand's elements, copied in row-major order (bytes as they are:
// NaN payloads survive).
std::vector<std::uint8_t> gather(const Operand& in) {
  const std::size_t item = in.is_double() ? 8 : storage_bytes(*in.format);
  std::vector<std::uint8_t> out(in.size * item);
  // View's strides count elements of its own type: walk a byte view whose
  // strides are the element strides times the item size.
  std::vector<std::ptrdiff_t> strides;
  for (std::ptrdiff_t s : in.strides) strides.push_back(s * static_cast<std::ptrdiff_t>(item));
  const kernels::View<const std::uint8_t> raw(static_cast<const std::uint8_t*>(in.data),
                                              kernels::Layout(in.shape, strides));
  std::size_t i = 0;
  raw.for_each([&](const std::uint8_t& first) { std::memcpy(&out[item * i++], &first, item); });
  return out;
}

std::uint64_t load_code(const void* p, std::size_t i, std::size_t bytes) {
  switch (bytes) {
    case 1: return static_cast<const std::uint8_t*>(p)[i];
    case 2: return static_cast<const std::uint16_t*>(p)[i];
    case 4: return static_cast<const std::uint32_t*>(p)[i];
    default: return static_cast<const std::uint64_t*>(p)[i];
  }
}

void store_code(void* p, std::size_t i, std::size_t bytes, std::uint64_t code) {
  switch (bytes) {
    case 1: static_cast<std::uint8_t*>(p)[i] = static_cast<std::uint8_t>(code); break;
    case 2: static_cast<std::uint16_t*>(p)[i] = static_cast<std::uint16_t>(code); break;
    case 4: static_cast<std::uint32_t*>(p)[i] = static_cast<std::uint32_t>(code); break;
    default: static_cast<std::uint64_t*>(p)[i] = code; break;
  }
}

// One element's exact value: a double, float32's bits, or a code decoded.
double load_value(const Operand& in, const void* data, std::size_t i) {
  if (in.is_double()) return static_cast<const double*>(data)[i];
  if (format_id(*in.format) == FormatId::float32) return static_cast<const float*>(data)[i];
  return in.format->to_double(load_code(data, i, storage_bytes(*in.format)));
}

void convert_scalar(const Operand& in, const void* data, const FormatEntry& to, void* out,
                    const kernels::ConvertOptions& o) {
  const bool to_float = format_id(to) == FormatId::float32;
  const std::size_t out_bytes = storage_bytes(to);
  without_gil(in.size, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t random =
          o.round == Round::stochastic ? kernels::stochastic_bits(o.seed, o.first_index + i) : 0;
      Flags f;
      const std::uint64_t code = to.from_double(load_value(in, data, i), o.round, o.overflow, random,
                                                o.stats != nullptr ? &f : nullptr);
      if (o.stats != nullptr) o.stats->add(f);
      if (to_float) {
        const auto bits = static_cast<std::uint32_t>(code);
        std::memcpy(static_cast<float*>(out) + i, &bits, 4);
      } else {
        store_code(out, i, out_bytes, code);
      }
    }
  }, kChunk / 16);
}

// n contiguous codes of `from` (in_bytes each) rounded into `to` by the
// kernel, in chunks without the GIL (conversion_chunk), each chunk's
// stochastic bits indexed from o.first_index as in the whole array.
void convert_contiguous(FormatId from, std::size_t in_bytes, const void* data, const FormatEntry& to, void* out,
                        std::size_t n, const kernels::ConvertOptions& o) {
  const std::size_t out_bytes = storage_bytes(to);
  without_gil(n, [&](std::size_t begin, std::size_t end) {
    kernels::ConvertOptions chunk = o;
    chunk.first_index = o.first_index + begin;
    kernels::bulk_convert(format_id(to), from, static_cast<const std::uint8_t*>(data) + begin * in_bytes,
                          static_cast<std::uint8_t*>(out) + begin * out_bytes, end - begin, chunk);
  }, conversion_chunk(n, out_bytes));
}

}  // namespace

// Rounds every element of `in` into `to`, writing out (row-major, contiguous).
void convert_into(const Operand& in, const FormatEntry& to, void* out, const kernels::ConvertOptions& o) {
  if (in.size == 0) return;
  const bool kernel = in.compiled() && to.declared == nullptr;
  // (The elementwise cast numbers elements from 0: a slice of a larger
  // array, first_index > 0, takes the gathered path.)
  if (kernel && !in.contiguous() && o.stats == nullptr && o.first_index == 0) {
    kernels::Operand x{in.id(), in.data, in.layout()};
    kernels::Output y{format_id(to), out, kernels::Layout(in.shape)};
    const kernels::Step identity{kernels::Unary::identity, 0.0f};
    kernels::ElementwiseOptions eo{.round = o.round, .overflow = o.overflow, .seed = o.seed, .threads = o.threads};
    nb::gil_scoped_release release;
    kernels::map_unary({&identity, 1}, x, y, eo);
    return;
  }
  std::vector<std::uint8_t> copy;
  const void* data = in.data;
  if (!in.contiguous()) {
    copy = gather(in);
    data = copy.data();
  }
  if (!kernel) return convert_scalar(in, data, to, out, o);
  convert_contiguous(in.id(), storage_bytes(*in.format), data, to, out, in.size, o);
}

nb::dict flags_dict(const kernels::FlagCounts& c) {
  nb::dict d;
  d["inexact"] = c.inexact;
  d["underflow"] = c.underflow;
  d["overflow"] = c.overflow;
  d["invalid"] = c.invalid;
  return d;
}

void bind_convert(nb::module_& m) {
  m.def("convert",
        [](nb::handle x, std::string_view x_format, nb::handle out, std::string_view to, std::string_view round,
           std::string_view overflow, std::uint64_t seed, bool flags, unsigned threads) {
          // A numpy array of a plain dtype through the buffer protocol (the
          // call's overhead, benchmarks/python_bench.py), any other array
          // (ml_dtypes' dtypes) through nanobind's ndarray.
          const BufferArray bx(x, false), bout(out, true);
          std::optional<InArray> nx;
          std::optional<OutParam> nout;
          if (!bx.ok() && !nb::try_cast(x, nx.emplace()))
            throw nb::type_error("convert: x is not an array on the CPU");
          if (!bout.ok() && !nb::try_cast(out, nout.emplace()))
            throw nb::type_error("convert: out is not a writable array on the CPU");
          const Operand in = operand(bx.ok() ? bx.ref() : ref_of(*nx), x_format, "x");
          const FormatEntry& target = format_named(to);
          kernels::FlagCounts counts;
          const kernels::ConvertOptions o{.round = round_named(round), .overflow = overflow_named(overflow),
                                          .seed = seed, .stats = flags ? &counts : nullptr, .threads = threads};
          runtime::check_overflow(target, o.overflow);
          convert_into(in, target, output(bout.ok() ? bout.ref() : ref_of(*nout), target, in, "out"), o);
          return flags ? nb::object(flags_dict(counts)) : nb::none();
        },
        nb::arg("x"), nb::arg("x_format"), nb::arg("out"), nb::arg("to"), nb::arg("round"), nb::arg("overflow"),
        nb::arg("seed"), nb::arg("flags"), nb::arg("threads"),
        "Rounds every element of x into `to`, written to out (C-contiguous, x's shape, the codes' dtype): the "
        "flag counts, or None. Underflow counts tiny results that are also inexact (IEEE 754-2019 7.5): an "
        "exact subnormal raises none.");
  // The package's common call, lplab.convert(x, to[, round, overflow, seed,
  // threads]) on a numpy array of floats into a new result, in one step:
  // the result allocated (numpy's C API), converted into and named (an Array,
  // or the float32 array itself) here, so that the call adds little to the
  // kernel's (benchmarks/python_bench.py). None where x is not such an
  // array: the package then takes its general path.
  m.def("convert_new",
        [](nb::handle x, std::string_view to, std::string_view round, std::string_view overflow,
           std::uint64_t seed, unsigned threads) -> nb::object {
          ArrayRef ref;
          std::int64_t strides[64];
          if (!numpy_floats(x, ref, strides)) return nb::none();
          const FormatEntry& target = format_named_cached(to);
          const kernels::ConvertOptions o{.round = round_named(round), .overflow = overflow_named(overflow),
                                          .seed = seed, .threads = threads};
          runtime::check_overflow(target, o.overflow);
          nb::object codes = new_result_array(target, ref);
          // float32 or float16 in row-major order into a compiled format:
          // the kernel on the whole array, as convert_into's contiguous path
          // (without building its Operand); else convert_into.
          const FormatId from = ref.dtype.bits == 32 ? FormatId::float32
                                : ref.dtype.bits == 16 ? FormatId::float16
                                                       : FormatId::none;
          std::size_t n = 1;
          bool row_major = true;
          for (std::size_t d = ref.ndim; d-- > 0;) {
            row_major &= ref.shape[d] == 1 || ref.strides[d] == static_cast<std::int64_t>(n);
            n *= static_cast<std::size_t>(ref.shape[d]);
          }
          if (n == 0) {
            // (nothing to convert)
          } else if (from != FormatId::none && row_major && target.declared == nullptr) {
            // Without the GIL, x held exported (as the buffer protocol's
            // readers hold it): no other thread can resize it meanwhile.
            std::optional<BufferArray> hold;
            if (n >= kKeepGil) hold.emplace(x, false);
            convert_contiguous(from, ref.dtype.bits / 8, ref.data, target, result_data(codes), n, o);
          } else {
            convert_into(operand(ref, "", "x"), target, result_data(codes), o);
          }
          return format_id(target) == FormatId::float32 ? codes : new_package_array(std::move(codes), target);
        },
        nb::arg("x"), nb::arg("to"), nb::arg("round"), nb::arg("overflow"), nb::arg("seed"), nb::arg("threads"),
        "lplab.convert's common case: a numpy float array x rounded into `to`, a new Array (a float32 array for "
        "float32), or None where x is not a numpy array of floats.");
  m.def("_set_array_class", [](nb::handle cls) { set_package_array_class(cls); }, nb::arg("cls"),
        "The package's Array class, which convert_new's results are (set once, by lplab._arrays).");
  m.def("decode",
        [](const InArray& x, const std::string& x_format, bool float64) {
          const Operand in = operand(x, x_format, "x");
          if (in.is_double()) value_error("x: float64 values are not codes to decode");
          if (!float64) {
            if (!in.compiled())
              value_error(fmt::format("x: {} is a declared format; its values may not be float32 values: "
                                      "decode(..., dtype=\"float64\")", in.format->name));
            OutArray y = new_array(nb::dtype<float>(), in.shape);
            convert_into(in, float32_entry(), y.data(), {});
            return y;
          }
          OutArray y = new_array(nb::dtype<double>(), in.shape);
          std::vector<std::uint8_t> copy;
          const void* data = in.data;
          if (!in.contiguous()) {
            copy = gather(in);
            data = copy.data();
          }
          auto* out = static_cast<double*>(y.data());
          without_gil(in.size, [&](std::size_t begin, std::size_t end) {
            for (std::size_t i = begin; i < end; ++i) out[i] = load_value(in, data, i);
          });
          return y;
        },
        nb::arg("x"), nb::arg("x_format"), nb::arg("float64"),
        "The exact values of codes, as float32 (every compiled format's values are float32 values) or float64.");
  m.def("pack",
        [](const InArray& codes, const std::string& format) {
          const Operand in = operand(codes, format, "codes");
          if (!in.compiled() || !in.contiguous())
            value_error("codes: pack takes a contiguous array of a compiled FP4/FP6 format's codes");
          return runtime::visit_format(*in.format, [&]<class T>(std::type_identity<T>) -> OutArray {
            if constexpr (kernels::is_packed_format_v<T>) {
              OutArray y = new_array(nb::dtype<std::uint8_t>(), {kernels::packed_bytes<T>(in.size)});
              kernels::pack<T>({static_cast<const T*>(in.data), in.size},
                               {static_cast<std::uint8_t*>(y.data()), kernels::packed_bytes<T>(in.size)});
              return y;
            } else {
              value_error(fmt::format("codes: {} is not packed (packing is for the 4- and 6-bit formats)",
                                      in.format->name));
            }
          });
        },
        nb::arg("codes"), nb::arg("format"),
        "FP4/FP6 codes packed as CUDA stores them: two E2M1 codes a byte, four FP6 codes in three bytes.");
  m.def("unpack",
        [](const InArray& bytes, const std::string& format, std::size_t n) {
          const FormatEntry& f = format_named(format);
          if (bytes.dtype() != nb::dtype<std::uint8_t>() || bytes.ndim() != 1 || (n != 0 && bytes.stride(0) != 1))
            value_error("bytes: unpack takes a contiguous 1-D uint8 array");
          if (f.declared != nullptr) value_error(fmt::format("{} is a declared format; unpack takes FP4/FP6", f.name));
          return runtime::visit_format(f, [&]<class T>(std::type_identity<T>) -> OutArray {
            if constexpr (kernels::is_packed_format_v<T>) {
              if (bytes.shape(0) != kernels::packed_bytes<T>(n))
                value_error(fmt::format("bytes: {} elements of {} take {} bytes, not {}", n, f.name,
                                        kernels::packed_bytes<T>(n), bytes.shape(0)));
              OutArray y = new_codes(f, {n});
              kernels::unpack<T>({static_cast<const std::uint8_t*>(bytes.data()), bytes.shape(0)},
                                 {static_cast<T*>(y.data()), n});
              return y;
            } else {
              value_error(fmt::format("{} is not packed (packing is for the 4- and 6-bit formats)", f.name));
            }
          });
        },
        nb::arg("bytes"), nb::arg("format"), nb::arg("n"), "The codes of n elements packed by pack().");
  m.def("packed_bytes",
        [](const std::string& format, std::size_t n) {
          const FormatEntry& f = format_named(format);
          if (f.declared != nullptr) return n * storage_bytes(f);
          return runtime::visit_format(f, [&]<class T>(std::type_identity<T>) -> std::size_t {
            return kernels::is_packed_format_v<T> ? kernels::packed_bytes<T>(n) : n * storage_bytes(f);
          });
        },
        nb::arg("format"), nb::arg("n"), "Bytes that n elements of the format take packed.");
}

}  // namespace lplab::python
