// Strided N-d views: a pointer, a shape and strides in elements — PyTorch's
// storage/stride model, without ownership. Kernels take views so that they
// run on contiguous arrays and on transposed or sliced layouts alike, without
// a copy. Not a tensor library: what the kernels and the harness need.
//
//   float buf[6];
//   View<float> x(buf, {2, 3});          // row-major, strides {3, 1}
//   auto t = x.transpose(0, 1);          // shape {3, 2}, strides {1, 3}: no copy
//   t.is_contiguous();                   // false
//   t.view({6});                         // throws: as PyTorch's x.t().view(6)
//   auto c = contiguous(t);              // an owning row-major copy
//   x.slice(1, 0, 2);                    // the first two columns, strides {3, 1}
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace lplab::kernels {

// The most dimensions a view has (PyTorch allows more; the kernels need few).
inline constexpr std::size_t kMaxRank = 8;

namespace detail {
[[noreturn]] void throw_view_error(const std::string& what);  // std::invalid_argument
}  // namespace detail
// A shape as the messages show it: "[2, 3]", "[]" for a scalar.
std::string shape_text(std::span<const std::size_t> shape);

// A shape and its strides; the part of a view that does not depend on T.
class Layout {
 public:
  Layout() = default;
  // Row-major (C-contiguous) strides for `shape`.
  explicit Layout(std::span<const std::size_t> shape);
  Layout(std::initializer_list<std::size_t> shape)
      : Layout(std::span<const std::size_t>(shape.begin(), shape.size())) {}
  // Explicit strides, in elements (non-negative; 0 broadcasts).
  Layout(std::span<const std::size_t> shape, std::span<const std::ptrdiff_t> strides);

  std::size_t rank() const { return rank_; }
  std::size_t size(std::size_t dim) const { return shape_.at(check_dim(dim)); }
  std::ptrdiff_t stride(std::size_t dim) const { return strides_.at(check_dim(dim)); }
  std::span<const std::size_t> shape() const { return {shape_.data(), rank_}; }
  std::span<const std::ptrdiff_t> strides() const { return {strides_.data(), rank_}; }
  std::size_t numel() const;
  // Row-major with no gaps: element i (in row-major order) is at offset i.
  // Dimensions of size 1 may have any stride, as in PyTorch.
  bool is_contiguous() const;
  // The offset of the element at `index` (rank() indices).
  std::ptrdiff_t offset(std::span<const std::size_t> index) const;

  Layout transpose(std::size_t d0, std::size_t d1) const;
  // Elements begin, begin + step, ... < end of dimension `dim`, counted from
  // the same origin: the caller moves its pointer by begin * stride(dim).
  Layout slice(std::size_t dim, std::size_t begin, std::size_t end, std::size_t step = 1) const;
  // The same elements under another shape, when strides can express it
  // (PyTorch's view rule: only dimensions that lie contiguously in memory can
  // be merged); otherwise std::invalid_argument saying so.
  Layout view(std::span<const std::size_t> shape) const;

 private:
  std::size_t check_dim(std::size_t dim) const;
  std::size_t rank_ = 0;
  std::array<std::size_t, kMaxRank> shape_{};
  std::array<std::ptrdiff_t, kMaxRank> strides_{};
};

template <class T>
class View {
 public:
  View() = default;
  View(T* data, Layout layout) : data_(data), layout_(layout) { check_data(); }
  View(T* data, std::initializer_list<std::size_t> shape) : View(data, Layout(shape)) {}
  View(T* data, std::span<const std::size_t> shape) : View(data, Layout(shape)) {}
  View(T* data, std::span<const std::size_t> shape, std::span<const std::ptrdiff_t> strides)
      : View(data, Layout(shape, strides)) {}
  // A mutable view converts to a read-only one.
  operator View<const T>() const { return View<const T>(data_, layout_); }

  T* data() const { return data_; }
  const Layout& layout() const { return layout_; }
  std::size_t rank() const { return layout_.rank(); }
  std::size_t size(std::size_t dim) const { return layout_.size(dim); }
  std::ptrdiff_t stride(std::size_t dim) const { return layout_.stride(dim); }
  std::span<const std::size_t> shape() const { return layout_.shape(); }
  std::size_t numel() const { return layout_.numel(); }
  bool is_contiguous() const { return layout_.is_contiguous(); }

  template <class... I>
  T& operator()(I... index) const {
    static_assert((std::is_integral_v<I> && ...));
    const std::array<std::size_t, sizeof...(I)> idx{static_cast<std::size_t>(index)...};
    return data_[layout_.offset(idx)];
  }

  View transpose(std::size_t d0, std::size_t d1) const { return {data_, layout_.transpose(d0, d1)}; }
  View slice(std::size_t dim, std::size_t begin, std::size_t end, std::size_t step = 1) const {
    const Layout l = layout_.slice(dim, begin, end, step);  // checks the arguments
    return {l.numel() == 0 ? data_ : data_ + static_cast<std::ptrdiff_t>(begin) * stride(dim), l};
  }
  View view(std::initializer_list<std::size_t> shape) const {
    return {data_, layout_.view(std::span<const std::size_t>(shape.begin(), shape.size()))};
  }
  View view(std::span<const std::size_t> shape) const { return {data_, layout_.view(shape)}; }

  // Calls f(element&) for every element in row-major index order.
  template <class F>
  void for_each(F&& f) const {
    const std::size_t n = numel();
    if (n == 0) return;
    std::array<std::size_t, kMaxRank> idx{};
    std::ptrdiff_t off = 0;
    const std::size_t r = rank();
    for (std::size_t i = 0; i < n; ++i) {
      f(data_[off]);
      // Step the last index; carry into earlier ones (an odometer).
      for (std::size_t d = r; d-- > 0;) {
        off += layout_.stride(d);
        if (++idx[d] < layout_.size(d)) break;
        off -= layout_.stride(d) * static_cast<std::ptrdiff_t>(idx[d]);
        idx[d] = 0;
      }
    }
  }

 private:
  void check_data() const {
    if (data_ == nullptr && layout_.numel() != 0)
      detail::throw_view_error("view of " + shape_text(layout_.shape()) + " over a null pointer");
  }
  T* data_ = nullptr;
  Layout layout_;
};

// An owning row-major copy of a view's elements, and its view.
template <class T>
struct Tensor {
  std::vector<T> storage;
  Layout layout;
  View<T> view() { return {storage.data(), layout}; }
  View<const T> view() const { return {storage.data(), layout}; }
};

template <class T>
Tensor<std::remove_const_t<T>> contiguous(const View<T>& v) {
  Tensor<std::remove_const_t<T>> out;
  out.layout = Layout(v.shape());
  out.storage.reserve(v.numel());
  v.for_each([&](const T& x) { out.storage.push_back(x); });
  return out;
}

}  // namespace lplab::kernels
