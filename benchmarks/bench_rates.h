// What the benchmark programs share: each run's rate by name, recorded as
// the console reporter sees it (the median when repetitions are aggregated)
// and read back by the program's summary table; and N(0, 1) inputs.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace bench {

inline std::map<std::string, double>& rates() {
  static std::map<std::string, double> r;
  return r;
}
inline std::map<std::string, std::string>& labels() {
  static std::map<std::string, std::string> l;
  return l;
}
// The rate of run `name` (NaN if it did not run), and its label.
inline double rate(const std::string& name) {
  const auto it = rates().find(name);
  return it == rates().end() ? NAN : it->second;
}
inline std::string label(const std::string& name) {
  const auto it = labels().find(name);
  return it == labels().end() ? std::string() : it->second;
}

// Sets counter `name` to per_iteration units per second.
inline void rate_counter(benchmark::State& state, const char* name, double per_iteration) {
  state.counters[name] = benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

// The largest cache's bytes on this machine (Linux: the sizes sysfs gives
// for cpu0's caches), 0 where none can be read.
inline std::size_t largest_cache_bytes() {
  std::size_t best = 0;
  for (int i = 0; i < 16; ++i) {
    std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(f >> s) || s.empty()) continue;
    std::size_t v = std::strtoull(s.c_str(), nullptr, 10);
    switch (s.back()) {
      case 'K': v <<= 10; break;
      case 'M': v <<= 20; break;
      case 'G': v <<= 30; break;
      default: break;
    }
    best = std::max(best, v);
  }
  return best;
}

// The bytes of one array of an "out of cache" run: the smallest power of two
// that is at least `minimum` and 1.5 x the largest cache (a server's L3 of a
// few hundred MiB holds the 64 MiB arrays that leave a desktop's), so that no
// iteration finds its data in a cache.
inline std::size_t out_of_cache_bytes(std::size_t minimum = std::size_t{64} << 20) {
  const std::size_t want = std::max(minimum, largest_cache_bytes() / 2 * 3);
  std::size_t b = 1;
  while (b < want) b <<= 1;
  return b;
}

template <class T>
std::vector<T> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// The console reporter, recording each run's `counters` (the first it has)
// and label under the run's name without "_median", "/real_time", "/min_time:..."
// or "/repeats:...".
class Collector : public benchmark::ConsoleReporter {
 public:
  explicit Collector(std::initializer_list<const char*> counters) : counters_(counters) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      std::string name = r.benchmark_name();
      for (const char* suffix : {"_median", "/real_time"})
        if (const auto p = name.find(suffix); p != std::string::npos) name.erase(p);
      for (const char* setting : {"/min_time:", "/repeats:"})
        if (const auto p = name.find(setting); p != std::string::npos) name.erase(p, name.find('/', p + 1) - p);
      for (const char* c : counters_) {
        if (const auto it = r.counters.find(c); it != r.counters.end()) {
          rates()[name] = it->second.value;
          labels()[name] = r.report_label;
          break;
        }
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  std::vector<const char*> counters_;
};

}  // namespace bench
