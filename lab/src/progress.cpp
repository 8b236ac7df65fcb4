// Progress on stderr, and Ctrl-C: the signal handler only sets a flag; the
// run notices it at its next Progress::step and unwinds, so that no output
// is left half-written (the tool writes files to a temporary name and
// renames them only after a complete run).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

#include "lplab/lab/experiment.h"

namespace lplab::experiments {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
std::atomic<unsigned> g_heartbeat_seconds{0};

extern "C" void on_sigint(int) { g_interrupted = 1; }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

// A thread that wakes every `seconds` and prints one line of how far the
// work is, until the Progress ends.
struct Progress::Heartbeat {
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;

  Heartbeat(const Progress& p, unsigned seconds) {
    thread = std::thread([this, &p, seconds] {
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(m);
      while (!cv.wait_for(lock, std::chrono::seconds(seconds), [this] { return stop; })) {
        const long elapsed = static_cast<long>(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() + 0.5);
        const std::uint64_t total = p.total_.load(), done = p.done_.load();
        const std::string label = p.label_.empty() ? "working" : p.label_;
        if (total > 0)
          std::fprintf(stderr, "lplab: %s: %.0f%% after %ld s\n", label.c_str(),
                       100.0 * static_cast<double>(std::min(done, total)) / static_cast<double>(total), elapsed);
        else
          std::fprintf(stderr, "lplab: %s: still working after %ld s\n", label.c_str(), elapsed);
        std::fflush(stderr);
      }
    });
  }
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
};

Progress::Progress(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) == 1) {
  const unsigned seconds = g_heartbeat_seconds.load();
  if (!tty_ && seconds > 0) heartbeat_ = std::make_unique<Heartbeat>(*this, seconds);
}

Progress::~Progress() = default;

void Progress::set_heartbeat(unsigned seconds) { g_heartbeat_seconds = seconds; }

void Progress::set_total(std::uint64_t steps) {
  total_ = steps;
  done_ = 0;
}

void Progress::step(std::uint64_t n) {
  if (g_interrupted) throw Interrupted();
  done_ += n;
  if (!tty_) return;
  const double t = now_seconds();
  if (t - last_draw_ < 0.2) return;  // at most five redraws a second
  last_draw_ = t;
  if (total_ > 0)
    std::fprintf(stderr, "\r%s %3.0f%%", label_.c_str(),
                 100.0 * static_cast<double>(std::min(done_.load(), total_.load())) / static_cast<double>(total_));
  else
    std::fprintf(stderr, "\r%s %llu", label_.c_str(), static_cast<unsigned long long>(done_.load()));
  std::fflush(stderr);
}

void Progress::finish() {
  if (tty_ && last_draw_ != 0) std::fprintf(stderr, "\r\033[K");
  last_draw_ = 0;
}

void Progress::install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool Progress::interrupted() { return g_interrupted != 0; }

void Progress::clear_interrupt() { g_interrupted = 0; }

}  // namespace lplab::experiments
