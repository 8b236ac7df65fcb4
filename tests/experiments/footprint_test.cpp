// footprint: sizes against hand arithmetic (bits x elements / 8) and the
// lecture's figures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/kernels/integer_scaling.h"
#include "lplab/kernels/scaling.h"

namespace lx = lplab::experiments;

namespace {

std::vector<lx::Table> run_footprint(const std::map<std::string, std::string>& given,
                                     std::vector<std::string> dtypes, lx::Shard shard = {}) {
  const lx::Experiment* e = lx::find_experiment("footprint");
  if (e == nullptr) throw std::runtime_error("no footprint experiment");
  lx::Params p(e->params, given, e->name);
  std::vector<const lplab::runtime::FormatEntry*> formats;
  for (const std::string& d : dtypes) formats.push_back(lplab::runtime::find_format(d));
  lx::Progress prog;
  lx::Context ctx{p, formats, {}, "", shard, prog, 1};
  return e->run(ctx);
}

const lx::Table& table(const std::vector<lx::Table>& ts, const std::string& id) {
  for (const lx::Table& t : ts)
    if (t.id == id) return t;
  throw std::runtime_error("no table " + id);
}

// The number in column `col` of the row whose column `key` is `name`.
double value(const lx::Table& t, const std::string& key, const std::string& name,
             const std::string& col) {
  const std::size_t k = t.column(key), c = t.column(col);
  for (const lx::Row& r : t.rows)
    if (std::get<std::string>(r.cells[k]) == name) return lx::cell_number(r.cells[c]);
  throw std::runtime_error("no row " + name + " in " + t.id);
}

const std::vector<std::string> kDtypes = {"float32", "float16", "bfloat16", "float8_e4m3fn",
                                          "float6_e2m3fn", "float4_e2m1fn"};

}  // namespace

TEST(Footprint, LectureTensor4x8x20) {
  const auto ts = run_footprint({{"shape", "4x8x20"}}, kDtypes);
  const lx::Table& t = table(ts, "footprint_tensor");
  // 4 * 8 * 20 = 640 elements.
  EXPECT_EQ(value(t, "dtype", "float32", "numel"), 640);
  EXPECT_EQ(value(t, "dtype", "float32", "bytes"), 2560);  // 640 * 4
  EXPECT_EQ(value(t, "dtype", "float16", "bytes"), 1280);  // 640 * 2
  EXPECT_EQ(value(t, "dtype", "bfloat16", "bytes"), 1280);
  EXPECT_EQ(value(t, "dtype", "float8_e4m3fn", "bytes"), 640);
  EXPECT_EQ(value(t, "dtype", "float6_e2m3fn", "bytes"), 480);  // 640 * 6 / 8
  EXPECT_EQ(value(t, "dtype", "float4_e2m1fn", "bytes"), 320);  // 640 / 2
  EXPECT_EQ(value(t, "dtype", "float4_e2m1fn", "unpacked_bytes"), 640);
}

TEST(Footprint, BlockScaledTensorsCountTheirScales) {
  const auto ts = run_footprint({{"shape", "4x8x20"}}, {"float32"});
  const lx::Table& t = table(ts, "footprint_tensor");
  // 640 elements: 640 / 32 = 20 E8M0 scales (1 byte each) for MX; NVFP4 has
  // 640 / 16 = 40 E4M3 scales and a 4-byte fp32 tensor scale.
  EXPECT_EQ(value(t, "dtype", "mxfp8_e4m3", "bytes"), 640 + 20);
  EXPECT_EQ(value(t, "dtype", "mxfp8_e5m2", "bytes"), 640 + 20);
  EXPECT_EQ(value(t, "dtype", "mxfp6_e2m3", "bytes"), 480 + 20);
  EXPECT_EQ(value(t, "dtype", "mxfp6_e3m2", "bytes"), 480 + 20);
  EXPECT_EQ(value(t, "dtype", "mxfp4", "bytes"), 320 + 20);
  EXPECT_EQ(value(t, "dtype", "nvfp4", "bytes"), 320 + 40 + 4);
  // 16 x 16 blocks on 32 rows of 20: 2 x 2 blocks (the second column of blocks
  // holds 4 columns), 4 scales.
  EXPECT_EQ(value(t, "dtype", "nvfp4_2d", "bytes"), 320 + 4 + 4);
  // A partial block: 33 elements need two MX scales; 33 fp4 codes take 17 bytes.
  const auto odd = run_footprint({{"shape", "3x11"}}, {"float4_e2m1fn"});
  const lx::Table& o = table(odd, "footprint_tensor");
  EXPECT_EQ(value(o, "dtype", "float4_e2m1fn", "bytes"), 17);
  EXPECT_EQ(value(o, "dtype", "mxfp4", "bytes"), 17 + 2);  // ceil((132 + 16) / 8) = 19
}

TEST(Footprint, BitsPerElementOfFormatsAndSchemes) {
  const auto ts = run_footprint({}, kDtypes);
  const lx::Table& t = table(ts, "footprint_formats");
  EXPECT_EQ(value(t, "dtype", "float32", "storage_bits"), 32);
  EXPECT_EQ(value(t, "dtype", "bfloat16", "bytes_per_element"), 2);
  EXPECT_EQ(value(t, "dtype", "float6_e2m3fn", "storage_bits"), 6);
  EXPECT_EQ(value(t, "dtype", "float6_e2m3fn", "unpacked_bytes"), 1);
  EXPECT_EQ(value(t, "dtype", "float4_e2m1fn", "bytes_per_element"), 0.5);
  // OCP MX v1.0: element bits + 8 / 32; NVFP4: 4 + 8 / 16.
  EXPECT_EQ(value(t, "dtype", "mxfp8_e4m3", "storage_bits"), 8.25);
  EXPECT_EQ(value(t, "dtype", "mxfp6_e3m2", "storage_bits"), 6.25);
  EXPECT_EQ(value(t, "dtype", "mxfp4", "storage_bits"), 4.25);
  EXPECT_EQ(value(t, "dtype", "nvfp4", "storage_bits"), 4.5);
  EXPECT_EQ(value(t, "dtype", "nvfp4", "block_size"), 16);
  // One row per format and one per block scheme (kernels/scaling.h's list).
#define LPLAB_ONE(s, ...) +1
  EXPECT_EQ(t.rows.size(), kDtypes.size() LPLAB_BLOCK_SCHEMES(LPLAB_ONE) LPLAB_MATRIX_BLOCK_SCHEMES(LPLAB_ONE)
                               LPLAB_INTEGER_SCHEMES(LPLAB_ONE));
#undef LPLAB_ONE
  EXPECT_EQ(value(t, "dtype", "nvfp4_te", "storage_bits"), 4.5);
  // Integer schemes: element + (scale + zero point) / group; GPTQ's fp16
  // scales and 4-bit zero points, tinygemm's bf16 scales and zero points.
  EXPECT_EQ(value(t, "dtype", "int4_g128", "storage_bits"), 4 + 20.0 / 128);
  EXPECT_EQ(value(t, "dtype", "int4_g128_tinygemm", "storage_bits"), 4 + 32.0 / 128);
  EXPECT_EQ(value(t, "dtype", "int2_g64", "storage_bits"), 2 + 18.0 / 64);
  // 16 x 16 blocks: 4 + 8 / 256.
  EXPECT_EQ(value(t, "dtype", "nvfp4_2d", "storage_bits"), 4.03125);
  EXPECT_EQ(value(t, "dtype", "nvfp4_2d", "block_rows"), 16);
  // Each scheme's scale format is read from its type (kernels/scaling.h).
  std::map<std::string, std::string> scale;
  for (const lx::Row& r : t.rows)
    scale[std::get<std::string>(r.cells[t.column("dtype")])] = lx::cell_text(r.cells[t.column("scale_format")]);
  EXPECT_EQ(scale["mxfp6_e2m3"], "float8_e8m0fnu");
  EXPECT_EQ(scale["nvfp4"], "float8_e4m3fn + fp32 tensor scale");
}

TEST(Footprint, TrainingBytesPerParameter) {
  const auto ts = run_footprint({{"params", "7e9"}, {"device_gib", "80"}}, {"float32"});
  const lx::Table& t = table(ts, "footprint_training");
  EXPECT_EQ(value(t, "recipe", "fp32_adam", "bytes_per_param"), 4 + 4 + 8);
  EXPECT_EQ(value(t, "recipe", "bf16_pure_adam", "bytes_per_param"), 2 + 2 + 4);
  // ZeRO section 3.1: 2 + 2 + 4 (master) + 4 + 4 (Adam) = 16.
  EXPECT_EQ(value(t, "recipe", "mixed_bf16_adam", "bytes_per_param"), 16);
  EXPECT_EQ(value(t, "recipe", "mixed_bf16_adam", "master"), 4);
  EXPECT_EQ(value(t, "recipe", "fp8_mixed_adam", "bytes_per_param"), 1 + 2 + 4 + 8);
  EXPECT_EQ(value(t, "recipe", "fp8lm_adam", "bytes_per_param"), 6);
  EXPECT_EQ(value(t, "recipe", "inference_nvfp4", "bytes_per_param"), 4.5 / 8);
  // 7e9 * 16 / 2^30 = 104.3081283569336 GiB.
  EXPECT_DOUBLE_EQ(value(t, "recipe", "fp32_adam", "total_gib"), 7e9 * 16 / 1073741824.0);
  EXPECT_NEAR(value(t, "recipe", "fp32_adam", "total_gib"), 104.308, 1e-3);
  // 80 GiB / 16 bytes = 5 * 2^30 = 5368709120 parameters; / 8 bytes twice that.
  EXPECT_EQ(value(t, "recipe", "fp32_adam", "max_params"), 5368709120.0);
  EXPECT_EQ(value(t, "recipe", "bf16_pure_adam", "max_params"), 10737418240.0);
  EXPECT_EQ(value(t, "recipe", "fp8_mixed_adam", "max_params"), std::floor(80 * 1073741824.0 / 15));
}

TEST(Footprint, MalformedShapesAreUsageErrors) {
  for (const char* bad : {"", "x", "4x", "x4", "4xx8", "4x0", "a", "4 x 8", "-4", "4X8", "1x2x3x4x5x6x7x8x9",
                          "4294967296x4294967296"})
    EXPECT_THROW(run_footprint({{"shape", bad}}, {"float32"}), lplab::runtime::UsageError) << "shape '" << bad << "'";
  EXPECT_NO_THROW(run_footprint({{"shape", "1x2x3x4x5x6x7x8"}}, {"float32"}));
  // 4e18 elements would overflow the byte and bit counts (it printed a
  // negative size once); 2^56 is the largest accepted, and exact.
  EXPECT_THROW(run_footprint({{"shape", "100000000000000000x40"}}, {"float32"}), lplab::runtime::UsageError);
  const auto big = run_footprint({{"shape", "72057594037927936"}}, {"float32"});
  const lx::Table& t = table(big, "footprint_tensor");
  EXPECT_EQ(std::get<std::int64_t>(t.rows.at(0).cells[t.column("bytes")]), std::int64_t{1} << 58);
  for (const lx::Row& r : t.rows) EXPECT_GT(lx::cell_number(r.cells[t.column("bytes")]), 0);
}

TEST(Footprint, ShardsSplitTheRows) {
  const auto whole = run_footprint({}, kDtypes);
  const auto odd = run_footprint({}, kDtypes, lx::Shard{1, 2});
  const lx::Table& w = table(whole, "footprint_tensor");
  const lx::Table& o = table(odd, "footprint_tensor");
  ASSERT_EQ(o.rows.size(), w.rows.size() / 2);
  for (const lx::Row& r : o.rows) EXPECT_EQ(r.grid % 2, 1u);
}
