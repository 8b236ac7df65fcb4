// Formats declared by their layout in --dtypes (formats/declared.h): the
// experiments that take them (error, underflow) convert through the scalar
// core where no kernel is compiled for the format, and the others refuse
// them in one line naming those that take them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "lplab/lab/experiment.h"
#include "lplab/experiments/runner.h"

namespace lplab::experiments {
namespace {

std::vector<Table> run_with(std::string_view name, const std::map<std::string, std::string>& given,
                            const FormatEntry* format) {
  const Experiment* e = find_experiment(name);
  EXPECT_NE(e, nullptr);
  Params p(e->params, given, e->name);
  Progress prog;
  const std::vector<const FormatEntry*> f{format};
  Context ctx{p, f, {}, "", {}, prog, 1};
  return e->run(ctx);
}

bool has_column(const Table& t, std::string_view name) {
  for (const Column& c : t.columns)
    if (c.name == name) return true;
  return false;
}

bool same_cell(const Cell& a, const Cell& b) {
  const auto* x = std::get_if<double>(&a);
  const auto* y = std::get_if<double>(&b);
  if (x != nullptr && y != nullptr) return std::memcmp(x, y, sizeof(double)) == 0;  // NaN == NaN, -0 != +0
  return a == b;
}

// The rows of `format` in every table with a dtype (or matmul input) column
// (format rows only: scaling "none" where the table has that column).
std::map<std::string, std::vector<Row>> rows_of(const std::vector<Table>& ts, std::string_view format) {
  std::map<std::string, std::vector<Row>> out;
  for (const Table& t : ts) {
    const char* column = has_column(t, "dtype") ? "dtype" : has_column(t, "input") ? "input" : nullptr;
    if (column == nullptr) continue;
    std::vector<Row>& rows = out[t.id];
    for (const Row& r : t.rows) {
      if (std::get<std::string>(r.cells[t.column(column)]) != format) continue;
      if (has_column(t, "scaling") && std::get<std::string>(r.cells[t.column("scaling")]) != "none") continue;
      rows.push_back(r);
    }
  }
  return out;
}

// The same layout as float8_e4m3fn, declared: resolve_format maps a layout
// with a compiled twin to the compiled format, so the entry is made here.
// Every row the declared path computes equals the compiled kernels' row bit
// for bit -- every rounding mode, stochastic included (the same random bits
// per element) -- and the tables it leaves out say so.
void expect_twin_rows_equal(std::string_view experiment, const std::map<std::string, std::string>& params,
                            const std::vector<std::string>& compiled_only_tables) {
  const DeclaredFormat twin_format = *DeclaredFormat::parse("e4m3:bias=7:fn");
  FormatEntry twin;
  twin.name = "declared_twin";
  twin.info = twin_format.finfo();
  twin.declared = &twin_format;
  const FormatEntry* compiled = find_format("float8_e4m3fn");
  ASSERT_NE(compiled, nullptr);
  ASSERT_EQ(twin.info, compiled->info);

  const std::vector<Table> a = run_with(experiment, params, compiled);
  const std::vector<Table> b = run_with(experiment, params, &twin);
  const auto ra = rows_of(a, "float8_e4m3fn");
  const auto rb = rows_of(b, "declared_twin");
  std::size_t compared = 0;
  for (const auto& [id, rows] : ra) {
    SCOPED_TRACE(id);
    const bool compiled_only =
        std::find(compiled_only_tables.begin(), compiled_only_tables.end(), id) != compiled_only_tables.end();
    if (compiled_only) {
      EXPECT_FALSE(rows.empty());
      EXPECT_TRUE(rb.at(id).empty());
      continue;
    }
    ASSERT_EQ(rows.size(), rb.at(id).size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t c = 0; c < rows[i].cells.size(); ++c) {
        const Cell& x = rows[i].cells[c];
        const Cell& y = rb.at(id)[i].cells[c];
        if (std::holds_alternative<std::string>(x) && std::get<std::string>(x) == "float8_e4m3fn") continue;
        EXPECT_TRUE(same_cell(x, y)) << "row " << i << " column " << c;
        ++compared;
      }
  }
  EXPECT_GT(compared, 100u);
  for (const Table& t : b)
    if (std::find(compiled_only_tables.begin(), compiled_only_tables.end(), t.id) != compiled_only_tables.end()) {
      bool noted = false;
      for (const std::string& n : t.notes) noted = noted || n.find("declared_twin: no rows here") != std::string::npos;
      EXPECT_TRUE(noted) << t.id << " does not say why the declared format has no rows";
    }
}

TEST(DeclaredDtypes, error_rows_equal_the_compiled_kernels) {
  expect_twin_rows_equal("error", {{"n", "4096"}, {"draws", "500"}, {"terms", "300"}, {"schemes", "none"}},
                         {"error_ops", "error_square_sqrt"});
}

TEST(DeclaredDtypes, underflow_rows_equal_the_compiled_kernels) {
  expect_twin_rows_equal("underflow", {{"n", "2048"}, {"sigmas", "1e-9,1e-3,1,300,1e5"}, {"schemes", "none"}}, {});
}

// Every accumulator, the tensor core's block and fraction bits included
// (from the declared format's range), on operands rounded by the scalar core.
TEST(DeclaredDtypes, matmul_error_rows_equal_the_compiled_kernels) {
  expect_twin_rows_equal("matmul_error", {{"ks", "64,96,4096"}, {"m", "4"}, {"n", "3"}}, {});
}

// The range the accumulators read off a declared format's finfo fields is the
// one kernels::operand_range gives its compiled twin's type, for every
// compiled format the matmul takes.
TEST(DeclaredDtypes, operand_range_of_a_declared_layout_is_its_types) {
  int checked = 0;
  for (const FormatEntry& e : formats()) {
    if (!matmul_operand_problem(e).empty()) continue;
    const auto [typed, precision] = visit_format(e, []<class T>(std::type_identity<T>) {
      return std::pair{kernels::operand_range<T>(), kernels::output_precision<T>()};
    });
    const kernels::OperandRange r = operand_range(e);
    SCOPED_TRACE(std::string(e.name));
    EXPECT_EQ(r.fixed, typed.fixed);
    EXPECT_EQ(r.quantum_exp, typed.quantum_exp);
    EXPECT_EQ(r.magnitude_bits, typed.magnitude_bits);
    EXPECT_EQ(r.storage_bits, typed.storage_bits);
    EXPECT_EQ(r.emin, typed.emin);
    EXPECT_EQ(r.bf16_exact, typed.bf16_exact);
    EXPECT_EQ(output_precision(e), precision);
    ++checked;
  }
  EXPECT_GE(checked, 10);
  // E3M3 (bias 3, IEEE): values q 2^-5 with |q| < 2^9 (max 15.5 < 2^4).
  const kernels::OperandRange e3m3 = operand_range(resolve_format("e3m3"));
  EXPECT_TRUE(e3m3.fixed);
  EXPECT_EQ(e3m3.quantum_exp, -5);
  EXPECT_EQ(e3m3.magnitude_bits, 9);
  EXPECT_EQ(e3m3.storage_bits, 7);
  EXPECT_TRUE(e3m3.bf16_exact);
  // Values beyond float's range cannot be decoded to float operands.
  EXPECT_NE(matmul_operand_problem(resolve_format("e9m6")).find("decode operands to float"), std::string::npos);
  EXPECT_NE(matmul_operand_problem(resolve_format("e5m2:bias=200")).find("decode operands to float"),
            std::string::npos);
  EXPECT_NE(matmul_operand_problem(resolve_format("e8m7:bias=100")).find("decode operands to float"),
            std::string::npos);
  EXPECT_EQ(matmul_operand_problem(resolve_format("e5m2:bias=15:fnuz")), "");
}

// A layout without a compiled twin runs in error and underflow: e3m3 (bias 3,
// IEEE) has max 15.5 and smallest subnormal 2^-5 = 0.03125, so rounding
// N(0, 1) to nearest never exceeds half an ulp.
TEST(DeclaredDtypes, run_takes_a_declared_layout_where_the_experiment_does) {
  for (const char* name : {"error", "underflow"}) {
    RunRequest r;
    r.experiment = name;
    r.dtypes = {"e3m3"};
    r.params = {{"n", "1024"}};
    if (std::string(name) == "error") r.params.insert({{"draws", "100"}, {"terms", "100"}});
    else r.params.insert({"sigmas", "1"});
    const PreparedRun run = prepare(r);
    ASSERT_EQ(run.dtypes.size(), 1u);
    EXPECT_NE(run.dtypes[0]->declared, nullptr);
    Progress progress;
    const RunResult result = execute(run, progress);
    EXPECT_FALSE(result.tables.empty());
    if (std::string(name) == "error") {
      for (const Table& t : result.tables) {
        if (t.id != "error_conversion") continue;
        for (const Row& row : t.rows) {
          if (std::get<std::string>(row.cells[t.column("round")]) != "nearest_even") continue;
          if (std::get<std::string>(row.cells[t.column("dtype")]) != "e3m3:bias=3:ieee") continue;
          EXPECT_LE(std::get<double>(row.cells[t.column("ulp_max")]), 0.5);
          EXPECT_GT(std::get<double>(row.cells[t.column("ulp_max")]), 0.4);
        }
      }
    }
  }
}

TEST(DeclaredDtypes, other_experiments_refuse_naming_those_that_take_them) {
  RunRequest r;
  r.experiment = "footprint";
  r.dtypes = {"e3m3"};
  try {
    prepare(r);
    FAIL() << "footprint took a declared format";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("e3m3:bias=3:ieee is a declared format"), std::string::npos) << what;
    EXPECT_NE(what.find("underflow, error"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lplab::experiments
