// What a run asks of the machine, checked before any work: the machine
// itself (this_machine), memory (require_memory) and the shard (parse_shard).
// Apart from runner.cpp, which holds every experiment through the registry,
// so that the fuzz targets (fuzz/) link these without the experiments.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <thread>

#include "lplab/experiments/runner.h"
#include "lplab/kernels/targets.h"

namespace lplab::experiments {

Machine this_machine() {
  Machine m;
  m.cpu_model = kernels::cpu_model();
  m.cores = std::max(1u, std::thread::hardware_concurrency());
  m.simd_target = kernels::current_simd_target().name;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) m.memory_bytes = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return m;
}

void require_memory(double bytes, const std::string& what) {
  const double have = static_cast<double>(this_machine().memory_bytes);
  // Three quarters of physical memory: the rest is the system's and ours.
  if (have > 0 && bytes > 0.75 * have)
    throw UsageError(fmt::format("{} needs {:.3g} GiB, more than this machine's {:.3g} GiB allows",
                                 what, bytes / 1073741824.0, have / 1073741824.0));
  // A limit on the process (ulimit -v, -d: a batch system's memory request)
  // refuses the run here, naming it, rather than as a failed allocation
  // halfway through. Three quarters of it, as above: the program's own code
  // and libraries take the rest.
  for (const auto& [resource, name] : {std::pair{RLIMIT_AS, "address-space (ulimit -v)"},
                                       std::pair{RLIMIT_DATA, "data (ulimit -d)"}}) {
    struct rlimit r {};
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const double limit = static_cast<double>(r.rlim_cur);
    if (bytes > 0.75 * limit)
      throw UsageError(fmt::format("{} needs {:.3g} GiB, more than this process's {} limit of {:.3g} GiB allows",
                                   what, bytes / 1073741824.0, name, limit / 1073741824.0));
  }
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto whole = [&](const std::string& s) -> std::int64_t {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw UsageError(fmt::format("--shard '{}': expected I/N with whole numbers, 0 <= I < N", text));
    return std::stoll(s);
  };
  if (slash == std::string::npos)
    throw UsageError(fmt::format("--shard '{}': expected I/N (e.g. 3/16), 0 <= I < N", text));
  const std::int64_t i = whole(text.substr(0, slash)), n = whole(text.substr(slash + 1));
  if (n < 1 || n > 100000 || i >= n)
    throw UsageError(fmt::format("--shard '{}': need 0 <= I < N <= 100000", text));
  return Shard{static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(n)};
}

}  // namespace lplab::experiments
