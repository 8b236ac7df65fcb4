// The experiment harness: tables and their writers, parameter validation,
// shards and merging, the .npy reader, atomic writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "lplab/lab/experiment.h"
#include "lplab/runtime/formats.h"
#include "lplab/lab/npy.h"
#include "lplab/report/report.h"
#include "lplab/experiments/runner.h"

namespace lx = lplab::experiments;
namespace fs = std::filesystem;

namespace {

lx::Table sample_table() {
  lx::Table t;
  t.id = "sample";
  t.title = "A sample";
  t.columns = {{"name", ""}, {"count", ""}, {"bytes", "bytes"}};
  t.add(0, {std::string("a,b"), std::int64_t{3}, 0.1});
  t.add(1, {std::string("say \"hi\""), std::monostate{}, -INFINITY});
  t.notes.push_back("a note");
  return t;
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("lplab_harness_" + std::to_string(getpid()) + "_" + name)).string();
}

}  // namespace

TEST(Table, CsvQuotesAndShortestReals) {
  EXPECT_EQ(lx::to_csv(sample_table()),
            "name,count,bytes\n"
            "\"a,b\",3,0.1\n"
            "\"say \"\"hi\"\"\",,-inf\n");
}

TEST(Table, TextHasUnitsNotesAndOneFinalNewline) {
  const std::string s = lx::to_text(sample_table());
  EXPECT_NE(s.find("bytes [bytes]"), std::string::npos);
  EXPECT_NE(s.find("note: a note\n"), std::string::npos);
  EXPECT_EQ(s.back(), '\n');
  EXPECT_NE(s[s.size() - 2], '\n');
}

TEST(Table, JsonRoundTripKeepsTypesGridAndNonFinite) {
  const lx::Table t = sample_table();
  const lx::Table back = lx::table_from_json(nlohmann::ordered_json::parse(lx::to_json(t).dump()));
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(back.rows[0].cells[0]), "a,b");
  EXPECT_EQ(std::get<std::int64_t>(back.rows[0].cells[1]), 3);
  EXPECT_EQ(std::get<double>(back.rows[0].cells[2]), 0.1);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(back.rows[1].cells[1]));
  EXPECT_EQ(std::get<double>(back.rows[1].cells[2]), -INFINITY);
  EXPECT_EQ(back.rows[1].grid, 1u);
  EXPECT_EQ(back.notes, t.notes);
  EXPECT_THROW(t.column("nope"), std::out_of_range);
  lx::Table bad = t;
  EXPECT_THROW(bad.add(2, {std::int64_t{1}}), std::logic_error);
}

TEST(Params, DefaultsRangesAndClearErrors) {
  const std::vector<lx::ParamSpec> specs = {
      {"k", lx::ParamType::integer, "64", 1, 1 << 20, "inner size", {}, false},
      {"sigma", lx::ParamType::real, "1", 1e-300, 1e300, "scale", {}, false},
      {"ks", lx::ParamType::list, "64,128", 1, 65536, "sizes", {}, true},
      {"mode", lx::ParamType::text, "a", 0, 0, "mode", {"a", "b"}, false},
  };
  const lx::Params p(specs, {{"k", "1e3"}}, "x");
  EXPECT_EQ(p.integer("k"), 1000);
  EXPECT_EQ(p.real("sigma"), 1.0);
  EXPECT_EQ(p.numbers("ks"), (std::vector<double>{64, 128}));
  EXPECT_EQ(p.text("mode"), "a");
  auto message = [&](std::map<std::string, std::string> given) {
    try {
      lx::Params(specs, given, "x");
    } catch (const lplab::runtime::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({{"k", "0"}}), "x parameter k: 0 is outside [1, 1048576]");
  EXPECT_EQ(message({{"k", "2.5"}}), "x parameter k: '2.5' is not a whole number");
  EXPECT_EQ(message({{"k", "12abc"}}), "x parameter k: '12abc' is not a number");
  EXPECT_EQ(message({{"sigma", "nan"}}), "x parameter sigma: 'nan' is not finite");
  EXPECT_EQ(message({{"sigma", "-1"}}), "x parameter sigma: -1 is outside [1e-300, 1e+300]");
  EXPECT_EQ(message({{"ks", "64,,128"}}), "x parameter ks: empty item in '64,,128'");
  EXPECT_EQ(message({{"mode", "c"}}), "x parameter mode: unknown value 'c' (one of: a, b)");
  EXPECT_EQ(message({{"kk", "1"}}), "x has no parameter 'kk' (k, sigma, ks, mode)");
}

TEST(Shard, ParsesAndRefuses) {
  const lx::Shard s = lx::parse_shard("3/16");
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.count, 16u);
  EXPECT_TRUE(s.owns(19));
  EXPECT_FALSE(s.owns(20));
  for (const char* bad : {"16/16", "1", "-1/4", "a/b", "0/0", "1/", "/4", "0/1000000"})
    EXPECT_THROW(lx::parse_shard(bad), lplab::runtime::UsageError) << bad;
}

// A layout names a format wherever a format name is accepted: the compiled
// format of that layout where there is one, else a declared format whose
// finfo is finfo<T>'s for every compiled twin (finfo_test checks finfo<T>).
TEST(Registry, LayoutsNameDeclaredFormats) {
  EXPECT_EQ(&lplab::runtime::resolve_format("e5m2:bias=15"), lplab::runtime::find_format("float8_e5m2"));
  EXPECT_EQ(&lplab::runtime::resolve_format("e4m3:fn"), lplab::runtime::find_format("float8_e4m3fn"));
  EXPECT_EQ(&lplab::runtime::resolve_format("e3m2:bias=3:none"), lplab::runtime::find_format("float6_e3m2fn"));
  EXPECT_EQ(&lplab::runtime::resolve_format("e3m4"), lplab::runtime::find_format("float8_e3m4"));  // ml_dtypes' E3M4
  EXPECT_EQ(&lplab::runtime::resolve_format("e4m3:ieee"), lplab::runtime::find_format("float8_e4m3"));
  EXPECT_EQ(&lplab::runtime::resolve_format("e4m3:bias=11:fnuz"), lplab::runtime::find_format("float8_e4m3b11fnuz"));
  const lplab::runtime::FormatEntry& e3m3 = lplab::runtime::resolve_format("e3m3");
  ASSERT_NE(e3m3.declared, nullptr);
  EXPECT_EQ(&lplab::runtime::resolve_format("e3m3:bias=3:ieee"), &e3m3);  // one entry per layout
  EXPECT_EQ(e3m3.name, "e3m3:bias=3:ieee");
  // Max 0b0'110'111 = 1.875 * 2^3, eps 2^-3, smallest subnormal 2^(1 - 3 - 3);
  // of 128 codes, exponent 111 holds +-inf and 2 * 7 NaNs.
  EXPECT_EQ(e3m3.info.max, 15.0);
  EXPECT_EQ(e3m3.info.eps, 0.125);
  EXPECT_EQ(e3m3.info.smallest_subnormal, 0.03125);
  EXPECT_EQ(e3m3.info.finite_codes, 128u - 2 * 7 - 2);
  // Bias 20 puts every value below 2^-13 and bias -5 every normal above 64:
  // no 1.0, so no spacing at 1.0 (the code "1.0" would name would give -0.99998 and -273).
  for (const char* no_one : {"e3m4:bias=20", "e3m4:bias=-5"}) {
    EXPECT_TRUE(std::isnan(lplab::runtime::resolve_format(no_one).info.eps)) << no_one;
    EXPECT_TRUE(std::isnan(lplab::runtime::resolve_format(no_one).info.epsneg)) << no_one;
  }
  for (const lplab::runtime::FormatEntry& e : lplab::runtime::formats()) {
    if (!e.info.has_subnormals) continue;                      // E8M0: not declarable
    if (e.info.encoding == lplab::Encoding::integer) continue;  // nor the integers
    const lplab::Descriptor d{.name = {},
                              .exponent_bits = e.info.exponent_bits, .mantissa_bits = e.info.mantissa_bits,
                              .bias = e.info.bias,
                              .encoding = e.info.encoding,
                              .is_signed = e.info.is_signed};
    const auto twin = lplab::DeclaredFormat::make(d);
    ASSERT_TRUE(twin) << e.name;
    EXPECT_TRUE(twin->finfo() == e.info) << e.name;
  }
  // Bad layouts say why; experiments and kernels take compiled formats only.
  try {
    lplab::runtime::resolve_format("e3m4:bias=x");
    ADD_FAILURE() << "accepted";
  } catch (const lplab::runtime::UsageError& err) {
    EXPECT_STREQ(err.what(), "format 'e3m4:bias=x': bias=<integer> once, e.g. bias=3");
  }
  // underflow, error and matmul_error take declared formats
  // (declared_dtypes_test.cpp); roofline, which times compiled kernels, does not.
  lx::RunRequest r;
  r.experiment = "roofline";
  r.dtypes = {"e3m3"};
  try {
    lx::prepare(r);
    ADD_FAILURE() << "accepted";
  } catch (const lplab::runtime::UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("run --dtypes: e3m3:bias=3:ieee is a declared format"), std::string::npos)
        << err.what();
  }
}

// The registry holds the experiment of every file of experiments/each/ (the
// build generates that list), once, in the places the files declare -- not
// in the files' alphabetical order.
TEST(Registry, EveryExperimentFileOnceInItsPlace) {
  std::vector<std::string> names;
  for (const lx::Experiment& e : lx::experiments()) names.push_back(e.name);
  // The nine of this writing, in their places; a new file's experiment may
  // stand anywhere among them (its place decides), so they are a subsequence.
  const std::vector<std::string> known{"footprint", "underflow", "error", "matmul_error", "matrix_units",
                                       "training", "accounting", "roofline", "throughput"};
  std::size_t next = 0;
  for (const std::string& n : names)
    if (next < known.size() && n == known[next]) ++next;
  EXPECT_EQ(next, known.size()) << "missing or out of place: " << known[std::min(next, known.size() - 1)];
  EXPECT_EQ(lx::experiment_files().size(), names.size());
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (std::size_t i = 1; i < lx::experiments().size(); ++i)
    EXPECT_LT(lx::experiments()[i - 1].place, lx::experiments()[i].place) << names[i];
}

TEST(Registry, UnknownExperimentDtypeAndParameterAreRefusedBeforeWork) {
  EXPECT_EQ(lx::experiments().size(), lx::experiment_files().size());
  EXPECT_EQ(lx::find_experiment("matmul-error"), lx::find_experiment("matmul_error"));
  lx::RunRequest r;
  r.experiment = "nope";
  EXPECT_THROW(lx::prepare(r), lplab::runtime::UsageError);
  r.experiment = "underflow";
  r.dtypes = {"float9"};
  EXPECT_THROW(lx::prepare(r), lplab::runtime::UsageError);
  r.dtypes = {};
  r.params = {{"no_such_param", "1"}};
  EXPECT_THROW(lx::prepare(r), lplab::runtime::UsageError);
  r.params = {};
  r.input = temp_path("missing.npy");
  EXPECT_THROW(lx::prepare(r), lplab::runtime::UsageError);
  // Every experiment's declared parameters accept their own defaults,
  // report and quick values.
  for (const lx::Experiment& e : lx::experiments()) {
    EXPECT_NO_THROW(lx::Params(e.params, {}, e.name)) << e.name;
    EXPECT_NO_THROW(lx::Params(e.params, e.report_params, e.name)) << e.name;
    auto quick = e.report_params;
    for (const auto& [k, v] : e.quick_params) quick[k] = v;
    EXPECT_NO_THROW(lx::Params(e.params, quick, e.name)) << e.name;
  }
}

// This lplab's version, as a run's record carries it.
std::string record_version() {
  lx::RunRequest request;
  request.experiment = "footprint";
  const lx::PreparedRun run = lx::prepare(request);
  lx::RunResult result;
  result.run = &run;
  return lx::run_record(result).at("lplab_version").get<std::string>();
}

TEST(Merge, ShardsJoinInGridOrderAndMismatchesAreRefused) {
  const std::string version = record_version();
  auto record = [&](std::uint32_t index, std::uint32_t count, std::vector<std::uint64_t> grids) {
    lx::Table t;
    t.id = "t";
    t.title = "t";
    t.columns = {{"g", ""}};
    for (std::uint64_t g : grids) t.add(g, {static_cast<std::int64_t>(g)});
    nlohmann::ordered_json j;
    j["lplab"] = "run";
    j["lplab_version"] = version;
    j["experiment"] = "x";
    j["params"] = {{"n", "1"}};
    j["dtypes"] = nlohmann::ordered_json::array();
    j["input"] = "";
    j["shard"] = {{"index", index}, {"count", count}};
    j["tables"] = nlohmann::ordered_json::array({lx::to_json(t)});
    return j;
  };
  const auto merged = lx::merge_records({record(1, 2, {1, 3}), record(0, 2, {0, 2, 4})}, {"b", "a"});
  const lx::Table t = lx::tables_of(merged).at(0);
  ASSERT_EQ(t.rows.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(std::get<std::int64_t>(t.rows[i].cells[0]), static_cast<std::int64_t>(i));
  EXPECT_THROW(lx::merge_records({record(0, 2, {0})}, {"a"}), lplab::runtime::UsageError);  // shard 1 missing
  EXPECT_THROW(lx::merge_records({record(0, 2, {0}), record(0, 2, {0})}, {"a", "b"}), lplab::runtime::UsageError);
  auto other = record(1, 2, {1});
  other["params"]["n"] = "2";
  EXPECT_THROW(lx::merge_records({record(0, 2, {0}), other}, {"a", "b"}), lplab::runtime::UsageError);
  EXPECT_THROW(lx::merge_records({nlohmann::ordered_json::parse("[1]")}, {"a"}), lplab::runtime::UsageError);

  // Rows are checked against the run's schema; each would have merged before.
  auto refused = [&](const nlohmann::ordered_json& shard1, const std::string& expect) {
    try {
      lx::merge_records({record(0, 2, {0, 2}), shard1}, {"a", "b"});
      ADD_FAILURE() << "merged: " << expect;
    } catch (const lplab::runtime::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  };
  refused(record(1, 2, {1, 999999998}), "b: table t: a row at grid point 999999998, which shard 1/2 does not own");
  refused(record(1, 2, {1, 1}), "b: table t: grid point 1 appears twice (also in b)");
  auto text_cell = record(1, 2, {1, 3});
  text_cell["tables"][0]["rows"][1][0] = "three";
  refused(text_cell, "b: table t, grid point 3: column g holds text where other rows hold numbers");
  auto renamed = record(1, 2, {1});
  renamed["tables"][0]["columns"][0]["name"] = "h";
  refused(renamed, "b: table t has the columns (h) where a has (g)");

  // Each shard's structure is checked before anything is joined. Each of
  // these merged before (rows silently missing, a shard index read as 1 or
  // 2^64 - 1, a grid point -1 taken as 2^64 - 1).
  auto no_tables = record(1, 2, {1, 3});
  no_tables["tables"] = nlohmann::ordered_json::array();
  refused(no_tables, "b: no tables");
  auto tables_object = record(1, 2, {1, 3});
  tables_object["tables"] = nlohmann::ordered_json::object();
  refused(tables_object, "b: 'tables' is not a list of tables");
  auto other_version = record(1, 2, {1, 3});
  other_version["lplab_version"] = "0.0.1";
  refused(other_version, "b: made by lplab 0.0.1; this is lplab " + version);
  auto no_version = record(1, 2, {1, 3});
  no_version.erase("lplab_version");
  refused(no_version, "b: not the JSON output of 'lplab run' (no 'lplab_version')");
  auto fractional = record(1, 2, {1, 3});
  fractional["shard"]["index"] = 1.5;
  refused(fractional, "b: malformed 'shard' {\"index\":1.5,\"count\":2}");
  auto negative = record(1, 2, {1, 3});
  negative["shard"]["index"] = -1;
  refused(negative, "b: malformed 'shard' {\"index\":-1,\"count\":2}");
  auto whole_float = record(1, 2, {1, 3});
  whole_float["shard"]["count"] = 2.0;
  refused(whole_float, "b: malformed 'shard'");
  auto zero_count = record(0, 2, {0});
  zero_count["shard"] = {{"index", 0}, {"count", 0}};
  try {
    lx::merge_records({zero_count}, {"z"});
    ADD_FAILURE() << "merged a shard of a run in 0 shards";
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("z: malformed 'shard'"), std::string::npos) << e.what();
  }
  auto no_rows = record(1, 2, {1, 3});
  no_rows["tables"][0].erase("rows");
  refused(no_rows, "b: table t has no 'rows'");
  auto negative_grid = record(1, 2, {1, 3});
  negative_grid["tables"][0]["grid"][0] = -1;
  refused(negative_grid, "b: table t: grid point -1 is not a whole number >= 0");
  // A shard without one of the run's tables: its rows of that table would
  // be missing from the merge.
  auto two_tables = record(0, 2, {0, 2});
  auto second = two_tables["tables"][0];
  second["id"] = "u";
  two_tables["tables"].push_back(second);
  try {
    lx::merge_records({two_tables, record(1, 2, {1, 3})}, {"a", "b"});
    ADD_FAILURE() << "merged a shard without table u";
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("b: its tables (t) are not those of a (t, u)"), std::string::npos)
        << e.what();
  }
  // The damaged file is named wherever it comes in the list.
  try {
    lx::merge_records({record(0, 2, {0, 2}), record(1, 2, {1}), no_tables}, {"a", "b", "c"});
    ADD_FAILURE() << "merged a damaged third file";
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("c: no tables"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// .npy files written byte by byte here, as NumPy's format.rst describes them.

namespace {

std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const std::size_t lead = major == 1 ? 10 : 12;
  while ((lead + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const std::size_t n = header.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (major == 2) out += std::string(2, '\0');
  return out + header + data;
}

template <class U>
std::string words(const std::vector<U>& v, bool big_endian = false) {
  std::string s;
  for (U u : v)
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      const std::size_t b = big_endian ? sizeof(U) - 1 - i : i;
      s += static_cast<char>((u >> (8 * b)) & 0xFF);
    }
  return s;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string p = temp_path(name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string npy_error(const std::string& bytes) {
  const std::string p = write_temp("bad.npy", bytes);
  try {
    lx::read_npy(p);
  } catch (const lplab::runtime::UsageError& e) {
    fs::remove(p);
    return e.what();
  }
  fs::remove(p);
  return "accepted";
}

}  // namespace

TEST(Npy, Float32CFloat64FortranFloat16BigEndian) {
  // float32, C order, 2x2: 1, -2.5, 1e-8 (rounded to float), 65504.
  const std::vector<std::uint32_t> f32 = {0x3f800000, 0xc0200000, 0x322bcc77, 0x477fe000};
  auto a = lx::read_npy(write_temp("a.npy", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                                      words(f32))));
  EXPECT_EQ(a.dtype, "float32");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(a.values, (std::vector<double>{1.0, -2.5, static_cast<double>(std::bit_cast<float>(0x322bcc77u)), 65504.0}));

  // float64, Fortran order, shape (2, 3): memory holds columns; values come back in C order.
  const std::vector<double> col = {0, 3, 1, 4, 2, 5};  // column-major of [[0,1,2],[3,4,5]]
  std::vector<std::uint64_t> bits;
  for (double d : col) bits.push_back(std::bit_cast<std::uint64_t>(d));
  auto b = lx::read_npy(write_temp("b.npy", npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                                      words(bits))));
  EXPECT_EQ(b.values, (std::vector<double>{0, 1, 2, 3, 4, 5}));

  // float16, big-endian, 1-D, format 2.0: 0x3c00 = 1, 0x0001 = 2^-24, 0xfc00 = -inf.
  auto c = lx::read_npy(write_temp("c.npy", npy_bytes("{'descr': '>f2', 'fortran_order': False, 'shape': (3,), }",
                                                      words<std::uint16_t>({0x3c00, 0x0001, 0xfc00}, true), 2)));
  EXPECT_EQ(c.dtype, "float16");
  EXPECT_EQ(c.values, (std::vector<double>{1.0, std::ldexp(1.0, -24), -INFINITY}));
}

// ml_dtypes 0.6's own files (tests/data/ml_dtypes: np.save of a 15x14 array
// of each type, N(0, 16) values and 0, -0, 1e-9, 1e9, +-inf, NaN, 448, 449,
// 2^-6 converted by ml_dtypes' astype), each read with its format named and
// compared bit for bit with ml_dtypes' own astype(float64) of the array,
// saved beside it. Raw data are void ('<V2', '<V1'), or '<f1' for E5M2.
TEST(Npy, MlDtypesFilesReadWithTheirFormat) {
  const std::string dir = std::string(LPLAB_TEST_DATA_DIR) + "/ml_dtypes/";
  for (const char* name : {"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                           "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "float8_e3m4",
                           "float8_e4m3", "float8_e4m3b11fnuz", "int4", "uint4", "int2", "uint2", "int1", "uint1"}) {
    const lplab::runtime::FormatEntry& f = lplab::runtime::resolve_format(name);
    const auto raw = lx::read_npy(dir + name + ".npy", std::size_t{1} << 31, &f);
    const auto ref = lx::read_npy(dir + name + ".f64.npy");
    EXPECT_EQ(raw.dtype, name);
    EXPECT_EQ(raw.shape, (std::vector<std::size_t>{15, 14})) << name;
    ASSERT_EQ(raw.values.size(), ref.values.size()) << name;
    for (std::size_t i = 0; i < raw.values.size(); ++i)
      EXPECT_TRUE(std::bit_cast<std::uint64_t>(raw.values[i]) == std::bit_cast<std::uint64_t>(ref.values[i]) ||
                  (std::isnan(raw.values[i]) && std::isnan(ref.values[i])))
          << name << " element " << i << ": " << raw.values[i] << " vs ml_dtypes " << ref.values[i];
    // Without the format: one line saying how to name it.
    try {
      lx::read_npy(dir + name + ".npy");
      ADD_FAILURE() << name << " read without its format";
    } catch (const lplab::runtime::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("name their format with --input-dtype"), std::string::npos) << e.what();
    }
  }
  // A format of another width, and a format named for a float file.
  try {
    lx::read_npy(dir + "bfloat16.npy", std::size_t{1} << 31, &lplab::runtime::resolve_format("e4m3"));
    ADD_FAILURE();
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype '<V2' holds 2-byte elements; float8_e4m3fn codes take 1 byte"),
              std::string::npos)
        << e.what();
  }
  try {
    lx::read_npy(dir + "bfloat16.f64.npy", std::size_t{1} << 31, &lplab::runtime::resolve_format("bf16"));
    ADD_FAILURE();
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("holds float64 values"), std::string::npos) << e.what();
  }
  // A code wider than the format: FP4 in a byte must leave the high bits zero.
  const std::string fp4 = npy_bytes("{'descr': '|V1', 'fortran_order': False, 'shape': (2,), }", "\x07\x17");
  try {
    lx::parse_npy(fp4, "fp4.npy", std::size_t{1} << 31, &lplab::runtime::resolve_format("e2m1"));
    ADD_FAILURE();
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "fp4.npy: element 1 (C order) holds 0x17, not a float4_e2m1fn code (4 bits)");
  }
}

// NumPy's int8 and uint8 files ('|i1', '|u1') are those formats' codes, read
// without naming them; another format named for them is refused.
TEST(Npy, NumpyInt8AndUint8AreTheirFormats) {
  const auto i8 = lx::parse_npy(npy_bytes("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", "\x80\x7f\xff"),
                                "i8.npy", std::size_t{1} << 31, nullptr);
  EXPECT_EQ(i8.dtype, "int8");
  EXPECT_EQ(i8.values, (std::vector<double>{-128, 127, -1}));
  const auto u8 = lx::parse_npy(npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", "\x80\x7f\xff"),
                                "u8.npy", std::size_t{1} << 31, nullptr);
  EXPECT_EQ(u8.dtype, "uint8");
  EXPECT_EQ(u8.values, (std::vector<double>{128, 127, 255}));
  try {
    lx::parse_npy(npy_bytes("{'descr': '|i1', 'fortran_order': False, 'shape': (1,), }", "\x01"), "i8.npy",
                  std::size_t{1} << 31, &lplab::runtime::resolve_format("e4m3"));
    ADD_FAILURE();
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("holds int8 values (dtype '|i1')"), std::string::npos) << e.what();
  }
}

TEST(Npy, HeaderLongerThan127BytesIsRead) {
  // xtensor 0.24 reads the header length through signed chars: a low byte of
  // 0x80 or more was misread. A 246-byte header (0xF6) must work.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  dict += std::string(180, ' ');
  const std::string bytes = npy_bytes(dict, words<std::uint32_t>({0x40490fdb}));
  ASSERT_GE(static_cast<unsigned char>(bytes[8]), 0x80);
  const auto a = lx::read_npy(write_temp("long.npy", bytes));
  EXPECT_EQ(a.values.at(0), static_cast<double>(std::bit_cast<float>(0x40490fdbu)));
}

TEST(Npy, BadFilesGetOneLineNamingTheReason) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = words<std::uint32_t>({0, 0});
  EXPECT_NE(npy_error("hello").find("not a .npy file"), std::string::npos);
  EXPECT_NE(npy_error(npy_bytes(ok_dict, two.substr(0, 5))).find("truncated"), std::string::npos);
  EXPECT_NE(npy_error(npy_bytes(ok_dict, two + "x")).find("trailing bytes"), std::string::npos);
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", two))
                .find("dtype '<i4' is not float16, float32, float64, int8 or uint8"),
            std::string::npos);
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }", two))
                .find("malformed header"),
            std::string::npos);
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<f4', 'shape': (2,), }", two)).find("malformed header"),
            std::string::npos);
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", two))
                .find("shape too large"),
            std::string::npos);
  // An empty array whose other dimensions overflow xtensor's signed strides
  // (a fuzzer's find: UBSan stopped in xstrides.hpp).
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<f2', 'fortran_order': True, 'shape': (0, 4, 9999999999999999999), }", ""))
                .find("shape too large"),
            std::string::npos);
  EXPECT_NE(npy_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2305843009213693952), }", ""))
                .find("shape too large"),
            std::string::npos);
  EXPECT_EQ(npy_error(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2305843009213693951), }", "")),
            "accepted");
  EXPECT_NE(npy_error(std::string("\x93NUMPY\x03\x00", 8)).find("version 3.0"), std::string::npos);
  EXPECT_NE(npy_error(std::string("\x93NUMPY\x01\x00\xff\xff", 10)).find("truncated header"), std::string::npos);
  EXPECT_THROW(lx::read_npy(temp_path("none.npy")), lplab::runtime::UsageError);
}

TEST(Memory, SizesBeyondTheMachineAreRefused) {
  EXPECT_THROW(lx::require_memory(1e30, "a test"), lplab::runtime::UsageError);
  EXPECT_NO_THROW(lx::require_memory(1024, "a test"));
  EXPECT_GT(lx::this_machine().memory_bytes, 0u);
  // A 1 x 1 weight has no sample standard deviation.
  lx::RunRequest r;
  r.experiment = "underflow";
  r.params = {{"init_rows", "1"}, {"init_cols", "1"}, {"n", "32"}, {"sigmas", "1"}};
  const lx::PreparedRun run = lx::prepare(r);
  lx::Progress progress;
  EXPECT_THROW(lx::execute(run, progress), lplab::runtime::UsageError);
}

// `lplab report --out DIR` replaces a report as a whole: only where DIR holds
// nothing but the files its marker lists (once it removed a user's file).
TEST(Files, ReportReplacesOnlyWhatItWrote) {
  const fs::path dir = temp_path("report-dir");
  fs::remove_all(dir);
  fs::create_directories(dir / "data");
  auto put = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  put(".lplab-report", "written by lplab report; the files it wrote:\nindex.md\ndata/a.csv\n");
  put("index.md", "# report\n");
  put("data/a.csv", "x\n");
  EXPECT_NO_THROW(lx::check_report_dir(dir.string()));
  put("data/notes.txt", "mine\n");
  try {
    lx::check_report_dir(dir.string());
    ADD_FAILURE() << "a directory with a file lplab did not write was accepted";
  } catch (const lplab::runtime::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("holds 1 file that lplab did not write (data/notes.txt)"),
              std::string::npos)
        << e.what();
  }
  // A marker without the list (or none at all) vouches for no file.
  fs::remove(dir / "data/notes.txt");
  put(".lplab-report", "written by lplab report\n");
  EXPECT_THROW(lx::check_report_dir(dir.string()), lplab::runtime::UsageError);
  fs::remove(dir / ".lplab-report");
  EXPECT_THROW(lx::check_report_dir(dir.string()), lplab::runtime::UsageError);
  fs::remove_all(dir);
  EXPECT_NO_THROW(lx::check_report_dir(dir.string()));  // a new path
}

TEST(Files, AtomicWriteReplacesWholeFile) {
  const std::string p = temp_path("atomic.txt");
  lx::write_file_atomic(p, "first\n");
  lx::write_file_atomic(p, "second\n");
  std::ifstream f(p);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "second\n");
  fs::remove(p);
  EXPECT_THROW(lx::write_file_atomic("/nonexistent-dir/x.txt", "x"), lx::WriteError);
}
