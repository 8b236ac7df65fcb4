// footprint: how many bytes a number, a tensor and a trained parameter take.
//
// CS336 lecture 2 ("PyTorch and resource accounting") sizes a tensor as
// numel x bytes per element and a training run as bytes per parameter; this
// experiment derives every size from the formats and schemes themselves
// (finfo, packed.h, scaling.h), so that a new format or scheme needs no new
// arithmetic here.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "lplab/lab/experiment.h"
#include "lplab/lab/report_parts.h"
#include "lplab/kernels/integer_scaling.h"
#include "lplab/kernels/packed.h"
#include "lplab/kernels/scaling.h"

namespace lplab::experiments {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // 2^30 bytes

// Bytes per element of plain formats (finfo bits / 8): fp32 4, bf16 2, fp8 1.
template <class T>
constexpr double bytes_of = finfo<T>::bits / 8.0;

// One row of footprint_formats / footprint_tensor for a block or integer scheme.
struct SchemeSize {
  std::string name;
  std::string element, scale;
  int element_bits = 0, block_size = 0, block_rows = 1;
  double bits_per_element = 0;  // block scale included (scaling.h)
  bool tensor_scale = false;
  // n elements in rows of cols (the tensor's last dimension; it matters to
  // blocks that restart on each row or span rows).
  std::uint64_t (*storage_bits)(std::size_t n, std::size_t cols) = nullptr;
  std::string kind = "block";  // or "integer" (kernels/integer_scaling.h: groups along a row, 0 = the whole row)
};

template <class T>
inline constexpr bool is_integer_scaling = false;
template <class E, class S>
inline constexpr bool is_integer_scaling<kernels::IntegerScaling<E, S>> = true;

// A block scheme, or an integer one: per group the scale and the zero point
// (an element code or a scale-format value), a per-row scheme's group the
// shape's last dimension and a per-tensor one's the whole tensor
// (bits_per_element 0: read from storage_bits for the shape).
template <const auto& S>
SchemeSize scheme_size(std::string name) {
  using Scheme = std::remove_cvref_t<decltype(S)>;
  using Elem = typename Scheme::element_type;
  using Scale = typename Scheme::scale_type;
  SchemeSize r{std::move(name), Elem::descriptor.name.c_str(), Scale::descriptor.name.c_str(), finfo<Elem>::bits};
  if constexpr (is_integer_scaling<Scheme>) {
    r.block_size = S.per_tensor ? 0 : S.group_size;
    r.bits_per_element =
        S.group_size > 0 && !S.per_tensor ? kernels::bits_per_element(S, static_cast<std::size_t>(S.group_size)) : 0;
    r.storage_bits = [](std::size_t n, std::size_t cols) { return kernels::storage_bits(S, n, cols); };
    r.kind = "integer";
  } else {
    r.block_size = S.block_size;
    r.block_rows = S.block_rows;
    r.bits_per_element = kernels::bits_per_element(S);
    r.tensor_scale = S.tensor_scale;
    r.storage_bits = [](std::size_t n, std::size_t cols) {
      return S.block_rows == 1 ? kernels::storage_bits(S, n) : kernels::storage_bits(S, n, cols);
    };
  }
  return r;
}

// The block schemes of kernels/scaling.h: the MX formats of OCP MX v1.0
// (section 5.3, Table 1), NVFP4, and NVFP4's 16 x 16 weight blocks.
std::vector<SchemeSize> schemes() {
#define LPLAB_SCHEME_SIZE(s, ...) scheme_size<kernels::s>(#s),
#define LPLAB_INTEGER_SIZE(s, ...) scheme_size<kernels::s>(#s),
  return {LPLAB_BLOCK_SCHEMES(LPLAB_SCHEME_SIZE) LPLAB_MATRIX_BLOCK_SCHEMES(LPLAB_SCHEME_SIZE)
              LPLAB_INTEGER_SCHEMES(LPLAB_INTEGER_SIZE)};
#undef LPLAB_INTEGER_SIZE
#undef LPLAB_SCHEME_SIZE
}

// "4x8x20" -> {4, 8, 20}: positive decimal sizes joined by 'x', at most 8 of
// them, with a product of at most 2^56 elements.
std::vector<std::uint64_t> parse_shape(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("footprint: shape '" + text + "' " + why +
                      " (write positive sizes joined by 'x', e.g. 4x8x20)");
  };
  std::vector<std::uint64_t> dims;
  std::uint64_t numel = 1;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = text.find('x', pos);
    const std::string part = text.substr(pos, end == std::string::npos ? end : end - pos);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos)
      throw bad("is malformed");
    const std::uint64_t d = std::stoull(part);
    if (d == 0) throw bad("has a zero size");
    // 2^56 elements: the largest count whose size in bits (32 a float, 8.25
    // an MX element) still fits the tables' signed 64-bit integers.
    if (numel > (std::uint64_t{1} << 56) / d) throw bad("has more than 2^56 elements");
    numel *= d;
    dims.push_back(d);
    if (dims.size() > 8) throw bad("has more than 8 dimensions");
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return dims;
}

// A training recipe: bytes per parameter of each state kept in device memory.
struct Recipe {
  std::string name;
  double weights, grads, master, optimizer;
  std::string states;  // what each part is
};

std::vector<Recipe> recipes() {
  const double fp32 = bytes_of<float32>, bf16 = bytes_of<bfloat16>, fp16 = bytes_of<float16>,
               fp8 = bytes_of<float8_e4m3fn>;
  const double nvfp4 = kernels::bits_per_element(kernels::nvfp4) / 8.0;  // 4.5 / 8
  return {
      {"fp32_adam", fp32, fp32, 0, 2 * fp32, "fp32 weights and grads; Adam m, v in fp32"},
      {"bf16_pure_adam", bf16, bf16, 0, 2 * bf16, "bf16 weights and grads; Adam m, v in bf16"},
      {"mixed_bf16_adam", bf16, bf16, fp32, 2 * fp32,
       "bf16 weights and grads; fp32 master weights, Adam m, v (ZeRO section 3.1)"},
      {"fp8_mixed_adam", fp8, bf16, fp32, 2 * fp32,
       "fp8 weight copy, bf16 grads; fp32 master weights, Adam m, v"},
      {"fp8lm_adam", 0, fp8, fp16, fp8 + fp16,
       "FP8-LM: fp16 master (no other weight copy), fp8 grads, Adam m fp8, v fp16"},
      {"inference_bf16", bf16, 0, 0, 0, "bf16 weights only"},
      {"inference_fp8", fp8, 0, 0, 0, "fp8 weights only (per-tensor scale amortised)"},
      {"inference_nvfp4", nvfp4, 0, 0, 0, "NVFP4 weights with their E4M3 block scales"},
  };
}

std::vector<Table> run(const Context& ctx) {
  const std::string shape_text = ctx.params.text("shape");
  const std::vector<std::uint64_t> shape = parse_shape(shape_text);
  std::uint64_t numel = 1;
  for (std::uint64_t d : shape) numel *= d;
  const double params = ctx.params.real("params");
  const double device_gib = ctx.params.real("device_gib");

  Table formats{"footprint_formats",
                "Storage per element of each format and block-scaled scheme",
                {{"dtype", ""},
                 {"scheme", ""},
                 {"bits", "bits"},
                 {"unpacked_bytes", "bytes"},
                 {"storage_bits", "bits"},
                 {"bytes_per_element", "bytes"},
                 {"block_size", ""},
                 {"block_rows", ""},
                 {"scale_format", ""}},
                {},
                {"storage_bits: bits per element in memory. Plain formats: FP6 and FP4 packed "
                 "(kernels/packed.h: four FP6 codes in 3 bytes, two FP4 codes in a byte); "
                 "unpacked_bytes is the one-code-per-byte layout the kernels compute on.",
                 "Block-scaled schemes: element bits + scale bits / block size (OCP MX v1.0 "
                 "section 5.2): MXFP8 8 + 8/32 = 8.25, MXFP6 6.25, MXFP4 4.25, NVFP4 4 + 8/16 = "
                 "4.5; NVFP4's 16 x 16 weight blocks (block_rows 16) 4 + 8/256 = 4.03125. NVFP4's fp32 "
                 "tensor scale (32 bits per tensor) is amortised and left out "
                 "here; footprint_tensor counts it, and the 16 x 16 blocks there are laid on the shape's "
                 "last dimension as rows (partial blocks at the edges count whole).",
                 "Integer schemes (kernels/integer_scaling.h): element bits + (scale bits + zero-point "
                 "bits) / group, as GPTQ's and AWQ's checkpoints store them (codes and zero points packed, "
                 "fp16 scales): int4_g128 4 + (16 + 4)/128 = 4.15625; block_size is the group along a row, "
                 "0 for one scale per row (int8_channel: the shape's last dimension is the group) or per "
                 "tensor (int8_tensor)."}};
  Table tensor{"footprint_tensor",
               "Memory of one tensor of shape " + shape_text + " (" + std::to_string(numel) +
                   " elements)",
               {{"shape", ""},
                {"dtype", ""},
                {"numel", ""},
                {"bytes", "bytes"},
                {"unpacked_bytes", "bytes"}},
               {},
               {"bytes = numel x element size, FP6/FP4 packed, block scales and NVFP4's 4-byte "
                "tensor scale included (kernels::storage_bits rounded up to whole bytes). The "
                "lecture's 4x8x20 tensor: 2560 bytes in fp32, 1280 in fp16/bf16, 640 in fp8, 320 "
                "in packed fp4.",
                "unpacked_bytes: one code per byte (how lplab's kernels hold FP6/FP4 values)."}};

  std::uint64_t g = 0;
  for (const FormatEntry* f : ctx.dtypes) {
    visit_format(*f, [&]<class T>(std::type_identity<T>) {
      // Packed size of a long run, per element: exact for whole groups.
      constexpr std::size_t group = 1 << 12;
      const double storage_bits = kernels::packed_bytes<T>(group) * 8.0 / group;
      if (ctx.shard.owns(g))
        formats.add(g, {std::string(f->name), std::string("plain"), std::int64_t{finfo<T>::bits},
                        std::int64_t{sizeof(T)}, storage_bits, storage_bits / 8,
                        std::monostate{}, std::monostate{}, std::monostate{}});
      if (ctx.shard.owns(g))
        tensor.add(g, {shape_text, std::string(f->name), static_cast<std::int64_t>(numel),
                       static_cast<std::int64_t>(kernels::packed_bytes<T>(numel)),
                       static_cast<std::int64_t>(numel * sizeof(T))});
    });
    ++g;
  }
  for (const SchemeSize& s : schemes()) {
    if (ctx.shard.owns(g)) {
      // A per-row or per-tensor integer scheme's bits per element depend on the shape.
      const double per_element = s.bits_per_element > 0 ? s.bits_per_element
                                                         : static_cast<double>(s.storage_bits(numel, shape.back())) /
                                                               static_cast<double>(numel);
      formats.add(g, {s.name, s.kind, std::int64_t{s.element_bits},
                      std::int64_t{1}, per_element, per_element / 8,
                      std::int64_t{s.block_size}, std::int64_t{s.block_rows},
                      s.scale + (s.tensor_scale ? " + fp32 tensor scale" : "")});
      const std::uint64_t bits = s.storage_bits(numel, shape.back());
      // Unpacked: one byte per element code, plus the same scales.
      const std::uint64_t scale_bits = bits - numel * static_cast<std::uint64_t>(s.element_bits);
      tensor.add(g, {shape_text, s.name, static_cast<std::int64_t>(numel),
                     static_cast<std::int64_t>((bits + 7) / 8),
                     static_cast<std::int64_t>(numel + (scale_bits + 7) / 8)});
    }
    ++g;
  }

  Table training{"footprint_training",
                 "Training memory per parameter (activations excluded) for " + fmt::format("{:g}", params) +
                     " parameters and " + fmt::format("{:g}", device_gib) + " GiB of device memory",
                 {{"recipe", ""},
                  {"weights", "bytes"},
                  {"grads", "bytes"},
                  {"master", "bytes"},
                  {"optimizer", "bytes"},
                  {"bytes_per_param", "bytes"},
                  {"total_gib", "GiB"},
                  {"max_params", ""},
                  {"states", ""}},
                 {},
                 {"Per parameter: weights + gradients + master weights + optimizer states, "
                  "every size from the format's width. Activations, temporary buffers, "
                  "framework workspace and fragmentation are excluded, so max_params is an "
                  "upper bound.",
                  "mixed_bf16_adam is ZeRO's 2 + 2 + 4 + 4 + 4 = 16 bytes (Rajbhandari et al. "
                  "2019, arXiv 1910.02054, section 3.1, written there for fp16): the same as "
                  "fp32_adam, because the fp32 master copy replaces the fp32 weights.",
                  "fp8_mixed_adam assumes a persistent fp8 copy of the weights beside bf16 "
                  "grads and the fp32 master and Adam states (1 + 2 + 4 + 8 = 15). Transformer "
                  "Engine's default keeps bf16 weights and casts to fp8 per GEMM instead, which "
                  "is mixed_bf16_adam's 16 bytes.",
                  "fp8lm_adam follows FP8-LM (Peng et al. 2023, arXiv 2310.18313, section 2.3): "
                  "fp16 master weights with the fp8 compute copy made on the fly, fp8 grads, "
                  "Adam m in fp8 and v in fp16: 2 + 1 + 1 + 2 = 6 bytes.",
                  "total_gib = params x bytes_per_param / 2^30; max_params = floor(device_gib x "
                  "2^30 / bytes_per_param). device_gib is in GiB (2^30 bytes); the driver and the "
                  "CUDA context keep part of a device's memory, so less is usable."}};
  std::uint64_t r = 0;
  for (const Recipe& rc : recipes()) {
    if (ctx.shard.owns(r)) {
      const double bpp = rc.weights + rc.grads + rc.master + rc.optimizer;
      const double max_params = std::floor(device_gib * kGiB / bpp);
      training.add(r, {rc.name, rc.weights, rc.grads, rc.master, rc.optimizer, bpp,
                       params * bpp / kGiB,
                       max_params < 9.2e18 ? Cell{static_cast<std::int64_t>(max_params)}
                                           : Cell{max_params},
                       rc.states});
    }
    ++r;
  }
  return {formats, tensor, training};
}

// The report's plots of this experiment's tables.
std::vector<Plot> drawn_plots(const std::vector<Table>& tables) {
  std::vector<Plot> plots;
  if (const Table* t = find_table(tables, "footprint_training"); t != nullptr) {
    Plot p;
    p.id = "footprint_recipes";
    p.title = "Training memory per parameter, by recipe (weights, gradients, master copy, Adam)";
    p.ylabel = "bytes per parameter";
    p.xlabel = "";
    const std::size_t name = t->column("recipe"), bytes = t->column("bytes_per_param");
    Series s{"bytes per parameter", {}, "boxes"};
    for (std::size_t i = 0; i < t->rows.size(); ++i) {
      p.categories.push_back(cell_text(t->rows[i].cells[name]));
      s.points.emplace_back(static_cast<double>(i), cell_number(t->rows[i].cells[bytes]));
    }
    p.series.push_back(std::move(s));
    p.extra.push_back("set key off");
    p.extra.push_back("set yrange [0:*]");
    p.extra.push_back("set offsets 0, 0, graph 0.08, 0");
    p.caption = "Activations excluded. Mixed precision with fp32 master weights and Adam costs 16 bytes per "
                "parameter (ZeRO section 3.1), the same as plain fp32: its saving is in activations and speed.";
    add_plot(plots, std::move(p));
  }
  return plots;
}

// The report's headline figures from this experiment's tables.
void headline_figures(const std::vector<Table>& tables, Headlines& h) {
  h.add("4x8x20 tensor bytes: fp32, bf16, fp8, fp4",
      fmt::format("{}, {}, {}, {}",
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float32"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "bfloat16"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float8_e4m3fn"}}, "bytes")),
                  cell_text(lookup(tables, "footprint_tensor", {{"shape", "4x8x20"}, {"dtype", "float4_e2m1fn"}}, "bytes"))),
      "2560, 1280, 640, 320", "footprint_tensor");
  h.add("bits per element: MXFP8, MXFP6, MXFP4, NVFP4",
      fmt::format("{}, {}, {}, {}", cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp8_e4m3"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp6_e2m3"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "mxfp4"}}, "storage_bits")),
                  cell_text(lookup(tables, "footprint_formats", {{"dtype", "nvfp4"}}, "storage_bits"))),
      "8.25, 6.25, 4.25, 4.5", "footprint_formats");
  h.add("mixed precision + Adam, bytes per parameter",
      lookup(tables, "footprint_training", {{"recipe", "mixed_bf16_adam"}}, "bytes_per_param"), "16 (ZeRO 3.1)",
      "footprint_training");
}

}  // namespace

Experiment footprint_experiment() {
  return {
      .name = "footprint",
      .summary = "bytes per element, per tensor and per trained parameter, for every format and MX scheme",
      .params = {
          {"shape", ParamType::text, "4x8x20", 0, 0,
           "tensor shape, sizes joined by 'x' (the lecture's 4x8x20)", {}, false},
          {"params", ParamType::real, "7e9", 1, 1e15, "model parameter count", {}, false},
          {"device_gib", ParamType::real, "80", 1e-3, 1e9, "device memory in GiB (H100: 80)", {},
           false},
      },
      .default_dtypes = format_names(),
      .report_params = {{"shape", "4x8x20"}, {"params", "7e9"}, {"device_gib", "80"}},
      .run = run,
      .place = 10,
      .plots = drawn_plots,
      .headlines = headline_figures,
      .regression = {.pinned = true},
  };
}

}  // namespace lplab::experiments
