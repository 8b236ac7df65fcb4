// lplab's own regression baselines: the text form, parsing and its errors,
// the comparison and its tolerances, and entries of the computed suites that
// a wrong converter, kernel or finfo would get wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "lplab/regress/golden.h"
#include "lplab/runtime/text.h"
#include "lplab/kernels/targets.h"

namespace lx = lplab::experiments;

namespace {

const std::string& value_of(const lx::GoldenFile& f, const std::string& key) {
  const auto it = std::find_if(f.entries.begin(), f.entries.end(),
                               [&](const lx::GoldenEntry& e) { return e.key == key; });
  if (it == f.entries.end()) throw std::runtime_error("no entry " + key);
  return it->value;
}

std::string parse_error(const std::string& text) {
  try {
    lx::parse_golden(text, "t", "dir/t.txt");
  } catch (const lplab::runtime::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Golden, EverySuiteReadsBackFromItsText) {
  for (const std::string& s : lx::golden_suites()) {
    const lx::GoldenFile f = lx::compute_golden(s);
    ASSERT_GT(f.entries.size(), 100u) << s;
    const lx::GoldenFile back = lx::parse_golden(lx::golden_text(f), s, s + ".txt");
    ASSERT_EQ(back.entries.size(), f.entries.size()) << s;
    EXPECT_TRUE(lx::compare_golden(back, f).empty()) << s;
    for (std::size_t i = 0; i < f.entries.size(); ++i) {
      EXPECT_EQ(back.entries[i].key, f.entries[i].key);
      EXPECT_EQ(back.entries[i].value, f.entries[i].value);
      EXPECT_EQ(back.entries[i].tolerance, f.entries[i].tolerance);
    }
  }
}

TEST(Golden, SuitesAreDeterministic) {
  for (const char* s : {"conversions", "kernels", "experiments"}) {
    const lx::GoldenFile a = lx::compute_golden(s), b = lx::compute_golden(s);
    EXPECT_TRUE(lx::compare_golden(a, b).empty()) << s;
    EXPECT_EQ(lx::golden_text(a), lx::golden_text(b)) << s;  // tolerances aside: identical
  }
}

TEST(Golden, MalformedBaselinesNameTheFileAndLine) {
  EXPECT_EQ(parse_error("# c\nfloat16.bits = 16\nfloat16.max 65504\n"),
            "dir/t.txt:3: expected 'KEY = VALUE'");
  EXPECT_EQ(parse_error("a = 1\nb = 2\na = 3\n"), "dir/t.txt:3: key 'a' given twice (first on line 1)");
  EXPECT_EQ(parse_error("a = 1 ~ lots\n"), "dir/t.txt:1: tolerance 'lots' is not a number");
  EXPECT_EQ(parse_error("a = 1 ~ 2\n"), "dir/t.txt:1: tolerance 2 is not in (0, 1)");
  EXPECT_EQ(parse_error("a = 1 ~ nan\n"), "dir/t.txt:1: tolerance nan is not in (0, 1)");
  EXPECT_EQ(parse_error(" = 1\n"), "dir/t.txt:1: expected 'KEY = VALUE'");
  // An empty value is written as "KEY =" and reads back empty.
  const lx::GoldenFile f = lx::parse_golden("a =\nb = x y\n", "t", "t");
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[0].value, "");
  EXPECT_EQ(f.entries[1].value, "x y");
}

// A blank cell is an entry whose value is empty text: when it is gone it is
// gone, not also new (`lplab regress` once counted it both ways and printed
// 2^64 - 3 changed entries).
TEST(Golden, AnEmptyValueGoneIsRemovedOnly) {
  const lx::GoldenFile base = lx::parse_golden("blank =\nkept = 1\n", "t", "t");
  const lx::GoldenFile now = lx::parse_golden("kept = 1\nblank2 =\n", "t", "t");
  const std::vector<lx::GoldenChange> c = lx::compare_golden(base, now);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].key, "blank2");
  EXPECT_EQ(c[0].kind, lx::GoldenChange::Kind::added);
  EXPECT_EQ(c[1].key, "blank");
  EXPECT_EQ(c[1].kind, lx::GoldenChange::Kind::removed);
}

TEST(Golden, ComparisonIsExactUnlessTheCodeGivesATolerance) {
  const lx::GoldenFile base = lx::parse_golden(
      "code = 0x3c00 1 -\nreal = 0.25 ~ 1e-09\nnan = nan ~ 1e-09\ngone = 1\n", "t", "t");
  const lx::GoldenFile now = lx::parse_golden(
      "code = 0x3c01 1.0009765625 -\nreal = 0.2500000000002 ~ 1e-09\nnan = nan ~ 1e-09\nnew = 2\n",
      "t", "t");
  const std::vector<lx::GoldenChange> c = lx::compare_golden(base, now);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].key, "code");  // one bit of a code: a change
  EXPECT_EQ(c[0].old_value, "0x3c00 1 -");
  EXPECT_EQ(c[0].new_value, "0x3c01 1.0009765625 -");
  EXPECT_EQ(c[1].key, "new");   // in the build, not in the baseline
  EXPECT_EQ(c[1].old_value, "");
  EXPECT_EQ(c[2].key, "gone");  // in the baseline, no longer computed
  EXPECT_EQ(c[2].new_value, "");
  EXPECT_EQ(c[0].kind, lx::GoldenChange::Kind::changed);
  EXPECT_EQ(c[1].kind, lx::GoldenChange::Kind::added);
  EXPECT_EQ(c[2].kind, lx::GoldenChange::Kind::removed);
  // 0.25 -> 0.2500000000002 is 8e-13 relative: inside 1e-9. Just outside fails.
  const lx::GoldenFile far =
      lx::parse_golden("real = 0.25000000026 ~ 1e-09\nnan = 0.5 ~ 1e-09\n", "t", "t");
  const std::vector<lx::GoldenChange> d = lx::compare_golden(base, far);
  ASSERT_GE(d.size(), 2u);
  EXPECT_EQ(d[0].key, "real");
  EXPECT_EQ(d[0].tolerance, 1e-9);
  EXPECT_EQ(d[1].key, "nan");  // a NaN baseline matches only NaN
}

TEST(Golden, TheToleranceIsTheCodesNotTheFiles) {
  // A baseline cannot widen a tolerance (here to hide a wrong finfo) ...
  const lx::GoldenFile widened = lx::parse_golden("float32.bits = 33 ~ 0.5\n", "t", "t");
  const lx::GoldenFile exact = lx::parse_golden("float32.bits = 32\n", "t", "t");
  std::vector<lx::GoldenChange> c = lx::compare_golden(widened, exact);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].old_value, "33 ~ 0.5");
  EXPECT_EQ(c[0].new_value, "32 (exact)");
  // ... and a tolerance changed in the code is a change to review.
  const lx::GoldenFile base = lx::parse_golden("r = 0.5 ~ 1e-09\n", "t", "t");
  const lx::GoldenFile looser = lx::parse_golden("r = 0.5 ~ 0.01\n", "t", "t");
  c = lx::compare_golden(base, looser);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].new_value, "0.5 ~ 0.01");
}

TEST(Golden, EntriesThatWouldNotReadBackAreRefused) {
  for (const lx::GoldenEntry& bad : {lx::GoldenEntry{"a = b", "1"}, lx::GoldenEntry{"k", "1 ~ 2"},
                                     lx::GoldenEntry{"k", " 1"}, lx::GoldenEntry{"#k", "1"},
                                     lx::GoldenEntry{"k", "1\n2"}, lx::GoldenEntry{"", "1"}}) {
    lx::GoldenFile f{"t", "test", {}, {bad}};
    EXPECT_THROW(lx::golden_text(f), std::logic_error) << bad.key << " = " << bad.value;
  }
}

TEST(Golden, EntriesAWrongImplementationWouldGetWrong) {
  const lx::GoldenFile conv = lx::compute_golden("conversions");
  // E4M3's overflow threshold 464 is a tie: to even, 448 (0x7e); E5M2's
  // threshold 61440 is a tie to the even code 0x7c, infinity.
  EXPECT_EQ(value_of(conv, "float8_e4m3fn nearest_even ieee threshold (tie) (464)"), "0x7e 448 inexact");
  EXPECT_EQ(value_of(conv, "float8_e5m2 nearest_even ieee threshold (tie) (61440)"),
            "0x7c inf inexact,overflow");
  EXPECT_EQ(value_of(conv, "float8_e5m2 nearest_even saturate threshold (tie) (61440)"),
            "0x7b 57344 inexact,overflow");
  EXPECT_EQ(value_of(conv, "float16 toward_zero ieee 2max (131008)"), "0x7bff 65504 inexact,overflow");
  EXPECT_EQ(value_of(conv, "float16 upward ieee q/4 (1.4901161193847656e-08)"),
            "0x0001 5.960464477539063e-08 inexact,underflow");
  EXPECT_EQ(value_of(conv, "float16 nearest_away ieee one+eps/2 (tie) (1.00048828125)"),
            "0x3c01 1.0009765625 inexact");
  // Stochastic rounding of a half-ulp fraction: R below 2^31 keeps 1, at or
  // above rounds up (floor(f * 2^32) + R >= 2^32).
  EXPECT_EQ(value_of(conv, "float16 stochastic(R=0x7fffffff) ieee one+eps/2 (tie) (1.00048828125)"),
            "0x3c00 1 inexact");
  EXPECT_EQ(value_of(conv, "float16 stochastic(R=0x80000000) ieee one+eps/2 (tie) (1.00048828125)"),
            "0x3c01 1.0009765625 inexact");
  for (const lx::GoldenEntry& e : conv.entries)  // the bulk kernel agrees everywhere
    EXPECT_EQ(e.value.find("BULK-DIFFERS"), std::string::npos) << e.key << " = " << e.value;

  const lx::GoldenFile values = lx::compute_golden("values");
  EXPECT_EQ(value_of(values, "float16[0x7c00]"), "inf");
  EXPECT_EQ(value_of(values, "float16[0x0001]"), "5.960464477539063e-08");
  EXPECT_EQ(value_of(values, "float8_e4m3fn[0x7e]"), "448");
  EXPECT_TRUE(value_of(values, "float8_e4m3fnuz[0x80]").ends_with("nan"));  // the one NaN
  EXPECT_EQ(value_of(values, "float8_e4m3fnuz[0x00]"), "0");                 // the one zero
  EXPECT_EQ(value_of(values, "float4_e2m1fn[0x7]"), "6");

  const lx::GoldenFile finfo = lx::compute_golden("finfo");
  EXPECT_EQ(value_of(finfo, "float8_e5m2.max"), "57344");
  EXPECT_EQ(value_of(finfo, "bfloat16.smallest_subnormal"), "9.183549615799121e-41");
}

// The committed baselines hold on every SIMD target this CPU runs, not only
// on the one the dispatcher picks (the ctest regression.baselines runs that).
TEST(Golden, CommittedBaselinesHoldOnEverySimdTarget) {
  std::vector<lx::GoldenFile> baselines;
  for (const std::string& s : lx::golden_suites()) {
    std::ifstream in(std::string(LPLAB_REGRESSION_DIR) + "/" + s + ".txt");
    ASSERT_TRUE(in) << "no baseline " << s;
    std::ostringstream text;
    text << in.rdbuf();
    baselines.push_back(lx::parse_golden(text.str(), s, s + ".txt"));
  }
  for (const lplab::kernels::SimdTarget& t : lplab::kernels::simd_targets()) {
    lplab::kernels::force_simd_target(t.id);  // process-wide: the experiments' worker threads too
    for (std::size_t i = 0; i < baselines.size(); ++i) {
      const std::vector<lx::GoldenChange> c =
          lx::compare_golden(baselines[i], lx::compute_golden(lx::golden_suites()[i]));
      EXPECT_TRUE(c.empty()) << t.name << " " << lx::golden_suites()[i] << ": " << c.size()
                             << " entries differ; first " << c.front().key << ": " << c.front().old_value
                             << " -> " << c.front().new_value;
    }
  }
  lplab::kernels::force_simd_target(0);
}

TEST(Golden, UnknownSuiteIsAUsageError) {
  EXPECT_THROW(lx::compute_golden("nosuch"), lplab::runtime::UsageError);
}
