#include "lplab/kernels/view.h"

#include <cstdint>
#include <string>

namespace lplab::kernels {
namespace detail {

void throw_view_error(const std::string& what) { throw std::invalid_argument(what); }

}  // namespace detail

std::string shape_text(std::span<const std::size_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

std::string str(std::size_t v) { return std::to_string(v); }

std::string strides_text(std::span<const std::ptrdiff_t> strides) {
  std::string s = "[";
  for (std::size_t i = 0; i < strides.size(); ++i) s += (i ? ", " : "") + std::to_string(strides[i]);
  return s + "]";
}

// numel of a shape, refusing one whose element count (and so any offset into
// it) does not fit ptrdiff_t.
std::size_t checked_numel(std::span<const std::size_t> shape) {
  constexpr std::size_t kMax = static_cast<std::size_t>(PTRDIFF_MAX);
  std::size_t n = 1;
  for (std::size_t s : shape) {
    if (s != 0 && n > kMax / s) detail::throw_view_error("shape " + shape_text(shape) + " has too many elements");
    n *= s;
  }
  return n;
}

}  // namespace

Layout::Layout(std::span<const std::size_t> shape) {
  if (shape.size() > kMaxRank)
    detail::throw_view_error("rank " + std::to_string(shape.size()) + " exceeds the " +
                             std::to_string(kMaxRank) + " dimensions a view has");
  checked_numel(shape);
  rank_ = shape.size();
  std::ptrdiff_t stride = 1;
  for (std::size_t d = rank_; d-- > 0;) {
    shape_[d] = shape[d];
    strides_[d] = stride;
    stride *= static_cast<std::ptrdiff_t>(std::max<std::size_t>(shape[d], 1));
  }
}

Layout::Layout(std::span<const std::size_t> shape, std::span<const std::ptrdiff_t> strides)
    : Layout(shape) {
  if (strides.size() != shape.size())
    detail::throw_view_error(str(strides.size()) + " strides for a shape of rank " + str(shape.size()));
  for (std::size_t d = 0; d < rank_; ++d) {
    if (strides[d] < 0) detail::throw_view_error("negative stride " + std::to_string(strides[d]));
    strides_[d] = strides[d];
  }
}

std::size_t Layout::check_dim(std::size_t dim) const {
  if (dim >= rank_)
    detail::throw_view_error("dimension " + str(dim) + " of a view of rank " + str(rank_));
  return dim;
}

std::size_t Layout::numel() const { return checked_numel(shape()); }

bool Layout::is_contiguous() const {
  if (numel() == 0) return true;
  std::ptrdiff_t expected = 1;
  for (std::size_t d = rank_; d-- > 0;) {
    if (shape_[d] != 1 && strides_[d] != expected) return false;
    expected *= static_cast<std::ptrdiff_t>(shape_[d]);
  }
  return true;
}

std::ptrdiff_t Layout::offset(std::span<const std::size_t> index) const {
  if (index.size() != rank_)
    detail::throw_view_error(str(index.size()) + " indices into a view of rank " + str(rank_));
  std::ptrdiff_t off = 0;
  for (std::size_t d = 0; d < rank_; ++d) {
    if (index[d] >= shape_[d])
      detail::throw_view_error("index " + str(index[d]) + " out of range for dimension " + str(d) +
                               " of size " + str(shape_[d]));
    off += static_cast<std::ptrdiff_t>(index[d]) * strides_[d];
  }
  return off;
}

Layout Layout::transpose(std::size_t d0, std::size_t d1) const {
  Layout t = *this;
  std::swap(t.shape_[check_dim(d0)], t.shape_[check_dim(d1)]);
  std::swap(t.strides_[d0], t.strides_[d1]);
  return t;
}

Layout Layout::slice(std::size_t dim, std::size_t begin, std::size_t end, std::size_t step) const {
  check_dim(dim);
  if (step == 0) detail::throw_view_error("slice step 0");
  if (begin > end || end > shape_[dim])
    detail::throw_view_error("slice [" + str(begin) + ", " + str(end) + ") of dimension " + str(dim) +
                             " of size " + str(shape_[dim]));
  Layout s = *this;
  s.shape_[dim] = (end - begin + step - 1) / step;
  s.strides_[dim] = strides_[dim] * static_cast<std::ptrdiff_t>(step);
  return s;
}

Layout Layout::view(std::span<const std::size_t> shape) const {
  Layout out(shape);  // row-major strides; checks the rank
  const std::size_t n = numel();
  if (checked_numel(shape) != n)
    detail::throw_view_error("view: shape " + shape_text(shape) + " has " +
                             str(checked_numel(shape)) + " elements, the view " + str(n));
  if (n == 0 || rank_ == 0) return out;
  // Walk the old dimensions from the last, in chunks that lie contiguously in
  // memory (stride[d-1] = stride[d] * size[d]; size-1 dimensions join any
  // chunk). Each chunk must be covered by a run of new dimensions with the
  // same element count; those get strides that step through the chunk.
  auto fail = [&] {
    detail::throw_view_error("view: shape " + shape_text(shape) +
                             " cannot be expressed over this layout (shape " +
                             shape_text(this->shape()) + ", strides " + strides_text(strides()) +
                             "): it merges dimensions that are not contiguous in memory; make a "
                             "contiguous() copy first");
  };
  std::ptrdiff_t base = strides_[rank_ - 1];  // the stride of the chunk's last dimension
  std::size_t chunk_numel = 1, new_numel = 1;
  std::ptrdiff_t nd = static_cast<std::ptrdiff_t>(shape.size()) - 1;
  for (std::size_t d = rank_; d-- > 0;) {
    chunk_numel *= shape_[d];
    const bool chunk_starts_here =
        d == 0 || (shape_[d - 1] != 1 &&
                   strides_[d - 1] != static_cast<std::ptrdiff_t>(chunk_numel) * base);
    if (!chunk_starts_here) continue;
    while (nd >= 0 && (new_numel < chunk_numel || shape[nd] == 1)) {
      out.strides_[nd] = static_cast<std::ptrdiff_t>(new_numel) * base;
      new_numel *= shape[nd];
      --nd;
    }
    if (new_numel != chunk_numel) fail();
    if (d > 0) {
      base = strides_[d - 1];
      chunk_numel = new_numel = 1;
    }
  }
  if (nd != -1) fail();
  return out;
}

}  // namespace lplab::kernels
