// Counting over large index spaces on every core: the engine behind the
// exhaustive sweeps (all 2^32 float inputs) and the experiment harness.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace lplab::experiments {

struct CountResult {
  std::uint64_t visited = 0;
  std::uint64_t hits = 0;
  std::optional<std::uint64_t> first_hit;  // smallest index for which the predicate held
};

// Calls pred(i) for i in [0, n) on `threads` workers (default: every core) and
// counts the indices for which it returns true. Work is handed out in chunks
// so that cores stay busy whatever the cost per index.
template <class Pred>
CountResult parallel_count(std::uint64_t n, Pred pred, unsigned threads = 0) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr std::uint64_t chunk = std::uint64_t{1} << 16;
  std::atomic<std::uint64_t> next{0};
  std::mutex m;
  CountResult total;
  auto worker = [&] {
    CountResult local;
    for (;;) {
      const std::uint64_t begin = next.fetch_add(chunk);
      if (begin >= n) break;
      const std::uint64_t end = std::min(n, begin + chunk);
      for (std::uint64_t i = begin; i < end; ++i) {
        if (pred(i)) {
          ++local.hits;
          if (!local.first_hit || i < *local.first_hit) local.first_hit = i;
        }
      }
      local.visited += end - begin;
    }
    std::lock_guard lock(m);
    total.visited += local.visited;
    total.hits += local.hits;
    if (local.first_hit && (!total.first_hit || *local.first_hit < *total.first_hit))
      total.first_hit = local.first_hit;
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return total;
}

}  // namespace lplab::experiments
