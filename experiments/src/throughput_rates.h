// The throughput experiment's figures for one timed kernel: its rates, from
// the exact byte and FLOP counts over the measured seconds, and its
// utilisation of the roof it runs under -- the fp32 FMA peak for matmul,
// else STREAM's bandwidth at the kernel's own thread count. Arithmetic only:
// the timing is the experiment's, so a test feeds this fixed seconds and
// roofs and checks the formula and the roof chosen, which no machine's load
// can change.
#pragma once

namespace lplab::experiments::throughput {

// This machine's roofs as measured (machine_peaks.h).
struct Roofs {
  double peak_flops = 0;     // FLOP/s: fp32 FMA peak at the experiment's thread count
  double bandwidth_all = 0;  // bytes/s: STREAM at the experiment's thread count
  double bandwidth_one = 0;  // bytes/s: STREAM on one thread
};

// One timed kernel: its exact counts (flops 0: not counted) and its time.
struct Timed {
  bool compute_bound = false;  // matmul: against the FLOP peak; the others against bandwidth
  unsigned threads = 1;
  double seconds = 0, bytes = 0, flops = 0;
};

struct Rates {
  double gb_per_s = 0;
  double gflop_per_s = 0;  // 0 where the FLOPs are not counted
  double roof = 0;         // the roof applied: FLOP/s (compute-bound) or bytes/s
  double utilisation = 0;  // the kernel's rate over that roof; above 1 when the roof was measured low
};

inline Rates rates(const Timed& t, const Roofs& r) {
  constexpr double kGiga = 1e9;
  Rates out;
  out.gb_per_s = t.bytes / t.seconds / kGiga;
  out.gflop_per_s = t.flops / t.seconds / kGiga;
  out.roof = t.compute_bound ? r.peak_flops : t.threads == 1 ? r.bandwidth_one : r.bandwidth_all;
  out.utilisation = (t.compute_bound ? out.gflop_per_s : out.gb_per_s) * kGiga / out.roof;
  return out;
}

}  // namespace lplab::experiments::throughput
