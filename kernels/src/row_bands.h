// Splits the rows of a matmul's C into bands, one per worker thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "lplab/kernels/matmul.h"
#include "dispatch.h"
#include "lplab/kernels/targets.h"

namespace lplab::kernels::detail {

// Runs body(first_row, rows) on bands of [0, m) (a band may be empty), on
// `threads` threads (0: every core); each worker runs the caller's SIMD
// target and takes its permission for the CPU extensions. An exception in a worker, or a failure to start one, is rethrown
// after every started worker has been joined.
template <class F>
void for_row_bands(std::size_t m, unsigned threads, F&& body) {
  unsigned t = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : threads;
  t = static_cast<unsigned>(std::min<std::size_t>(t, std::max<std::size_t>(1, m)));
  if (t <= 1) return body(std::size_t{0}, m);
  const std::int64_t target = current_simd_target().id;
  const int extensions = thread_cpu_extensions();
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(t + 1);
  const std::size_t band = (m + t - 1) / t;
  try {
    for (unsigned w = 0; w < t; ++w) {
      const std::size_t first = std::min(m, w * band), rows = std::min(m, first + band) - first;
      pool.emplace_back([&, w, first, rows] {
        try {
          ScopedSimdTarget pin(target);
          set_thread_cpu_extensions(extensions);
          body(first, rows);
        } catch (...) {
          errors[w] = std::current_exception();
        }
      });
    }
  } catch (...) {
    errors[t] = std::current_exception();  // std::system_error: no more threads
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Where a packed panel keeps row t of column j: panels of `lanes` columns
// (a power of two), each `rows` rows of `lanes` values, so that a kernel
// reads a vector of columns in order. (A shift and a mask: a division per
// element cost a quarter of a 256^3 matmul's time.)
struct PanelIndex {
  std::size_t rows, lanes, shift = 0;
  PanelIndex(std::size_t rows_, std::size_t lanes_) : rows(rows_), lanes(lanes_) {
    while ((std::size_t{1} << shift) < lanes) ++shift;
  }
  std::size_t operator()(std::size_t t, std::size_t j) const {
    return (((j >> shift) * rows + t) << shift) + (j & (lanes - 1));
  }
};

// for_row_bands over a matmul: body(band, first) with `band` the problem
// restricted to rows [first, first + band.m) of A (B shared).
template <class F>
void for_problem_bands(const MatmulProblem& p, unsigned threads, F&& body) {
  for_row_bands(p.m, threads, [&](std::size_t first, std::size_t rows) {
    MatmulProblem band = p;
    band.m = rows;
    band.a = p.a + first * p.k;
    body(band, first);
  });
}

}  // namespace lplab::kernels::detail
