// Strided views (lplab/kernels/view.h): offsets, transposes, slices, the
// PyTorch view rule and contiguous copies, each against hand-computed layouts.
#include "lplab/kernels/view.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/errors.h"

namespace lplab::kernels {
namespace {

using Shape = std::vector<std::size_t>;
using Strides = std::vector<std::ptrdiff_t>;

Shape shape_of(const Layout& l) { return {l.shape().begin(), l.shape().end()}; }
Strides strides_of(const Layout& l) { return {l.strides().begin(), l.strides().end()}; }

std::vector<int> iota(std::size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

template <class T>
std::vector<int> elements(const View<T>& v) {
  std::vector<int> out;
  v.for_each([&](const T& x) { out.push_back(x); });
  return out;
}

using testing::error_of;

TEST(View, row_major_strides_and_offsets) {
  std::vector<int> buf = iota(24);
  View<int> x(buf.data(), {2, 3, 4});
  EXPECT_EQ(strides_of(x.layout()), (Strides{12, 4, 1}));
  EXPECT_EQ(x.numel(), 24u);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_EQ(x(1, 2, 3), 23);
  EXPECT_EQ(x(1, 0, 2), 14);
  x(0, 1, 1) = -5;
  EXPECT_EQ(buf[5], -5);
}

TEST(View, transpose_is_a_strided_view_of_the_same_memory) {
  std::vector<int> buf = iota(6);
  View<int> x(buf.data(), {2, 3});
  View<int> t = x.transpose(0, 1);
  EXPECT_EQ(shape_of(t.layout()), (Shape{3, 2}));
  EXPECT_EQ(strides_of(t.layout()), (Strides{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.data(), buf.data());
  EXPECT_EQ(elements(t), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t(2, 1), 5);
}

TEST(View, slices_move_the_origin_and_scale_the_stride) {
  std::vector<int> buf = iota(16);
  View<int> x(buf.data(), {4, 4});
  View<int> cols = x.slice(1, 1, 3);  // columns 1 and 2
  EXPECT_EQ(shape_of(cols.layout()), (Shape{4, 2}));
  EXPECT_EQ(strides_of(cols.layout()), (Strides{4, 1}));
  EXPECT_FALSE(cols.is_contiguous());
  EXPECT_EQ(elements(cols), (std::vector<int>{1, 2, 5, 6, 9, 10, 13, 14}));
  View<int> odd_rows = x.slice(0, 1, 4, 2);  // rows 1 and 3
  EXPECT_EQ(strides_of(odd_rows.layout()), (Strides{8, 1}));
  EXPECT_EQ(elements(odd_rows), (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ(x.slice(0, 2, 2).numel(), 0u);  // empty, allowed
}

// PyTorch: x = torch.arange(6).view(2, 3); x.t().view(2, 3) raises "view size
// is not compatible with input tensor's size and stride".
TEST(View, view_refuses_what_strides_cannot_express) {
  std::vector<int> buf = iota(6);
  View<int> x(buf.data(), {2, 3});
  const std::string msg = error_of([&] { (void)x.transpose(0, 1).view({2, 3}); });
  EXPECT_NE(msg.find("cannot be expressed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("strides [1, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("contiguous()"), std::string::npos) << msg;
  EXPECT_THROW((void)x.transpose(0, 1).view({6}), std::invalid_argument);
  // Element counts that differ are refused too.
  EXPECT_NE(error_of([&] { (void)x.view({4, 2}); }).find("has 8 elements, the view 6"), std::string::npos);
}

TEST(View, view_splits_and_merges_contiguous_chunks) {
  std::vector<int> buf = iota(24);
  View<int> x(buf.data(), {2, 3, 4});
  View<int> flat = x.view({24});
  EXPECT_EQ(strides_of(flat.layout()), (Strides{1}));
  View<int> v = x.view({6, 2, 2});
  EXPECT_EQ(strides_of(v.layout()), (Strides{4, 2, 1}));
  EXPECT_EQ(v(5, 1, 0), 22);
  // A column slice keeps rows apart: its first dimension can still be split,
  // since each row is itself contiguous, but rows cannot be merged.
  std::vector<int> b16 = iota(16);
  View<int> cols = View<int>(b16.data(), {4, 4}).slice(1, 0, 2);  // strides {4, 1}
  View<int> split = cols.view({2, 2, 2});
  EXPECT_EQ(strides_of(split.layout()), (Strides{8, 4, 1}));
  EXPECT_EQ(elements(split), elements(cols));
  EXPECT_THROW((void)cols.view({8}), std::invalid_argument);
  // The transposed view can be viewed with size-1 dimensions added.
  View<int> t = x.transpose(1, 2);  // shape {2, 4, 3}, strides {12, 1, 4}
  View<int> t1 = t.view({2, 1, 4, 3});
  EXPECT_EQ(elements(t1), elements(t));
  EXPECT_THROW((void)t.view({2, 12}), std::invalid_argument);
  // Merging dimensions 0 and 1 needs stride[0] = stride[1] * size[1] = 4; it is 12.
  EXPECT_THROW((void)t.view({8, 3}), std::invalid_argument);
}

TEST(View, contiguous_copies_in_row_major_order) {
  std::vector<int> buf = iota(12);
  View<int> x(buf.data(), {3, 4});
  Tensor<int> c = contiguous(x.transpose(0, 1).slice(0, 1, 4, 2));  // columns 1 and 3, as rows
  EXPECT_EQ(shape_of(c.layout), (Shape{2, 3}));
  EXPECT_TRUE(c.view().is_contiguous());
  EXPECT_EQ(c.storage, (std::vector<int>{1, 5, 9, 3, 7, 11}));
  // A const view of the copy, and a view of the copy that now can merge.
  View<const int> cv = c.view();
  EXPECT_EQ(cv.view({6})(4), 7);
}

TEST(View, bad_arguments_are_clear_errors) {
  std::vector<int> buf = iota(6);
  View<int> x(buf.data(), {2, 3});
  EXPECT_NE(error_of([&] { (void)x.transpose(0, 2); }).find("dimension 2 of a view of rank 2"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)x.slice(1, 2, 4); }).find("slice [2, 4) of dimension 1 of size 3"),
            std::string::npos);
  EXPECT_THROW((void)x.slice(1, 0, 3, 0), std::invalid_argument);
  EXPECT_NE(error_of([&] { (void)x(2, 0); }).find("index 2 out of range for dimension 0"), std::string::npos);
  EXPECT_NE(error_of([&] { View<int>(nullptr, {2, 3}); }).find("null pointer"), std::string::npos);
  EXPECT_NO_THROW(View<int>(nullptr, {0, 3}));
  const std::vector<std::size_t> nine(9, 1);
  EXPECT_NE(error_of([&] { View<int>(buf.data(), std::span<const std::size_t>(nine)); }).find("rank 9"),
            std::string::npos);
  const std::vector<std::size_t> huge = {std::size_t{1} << 40, std::size_t{1} << 40};
  EXPECT_NE(error_of([&] { View<int>(buf.data(), std::span<const std::size_t>(huge)); }).find("too many elements"),
            std::string::npos);
  const std::vector<std::size_t> s2 = {2, 3};
  const std::vector<std::ptrdiff_t> neg = {3, -1};
  EXPECT_THROW(View<int>(buf.data(), std::span<const std::size_t>(s2), std::span<const std::ptrdiff_t>(neg)),
               std::invalid_argument);
}

TEST(View, rank_zero_and_broadcast_strides) {
  int one = 7;
  View<int> s(&one, std::span<const std::size_t>{});
  EXPECT_EQ(s.numel(), 1u);
  EXPECT_EQ(elements(s), std::vector<int>{7});
  EXPECT_EQ(s.view({1, 1}).numel(), 1u);
  // Stride 0 repeats an element (PyTorch's expand).
  std::vector<int> row = {1, 2, 3};
  const std::vector<std::size_t> shape = {2, 3};
  const std::vector<std::ptrdiff_t> strides = {0, 1};
  View<int> e(row.data(), std::span<const std::size_t>(shape), std::span<const std::ptrdiff_t>(strides));
  EXPECT_EQ(elements(e), (std::vector<int>{1, 2, 3, 1, 2, 3}));
  EXPECT_FALSE(e.is_contiguous());
}

}  // namespace
}  // namespace lplab::kernels
