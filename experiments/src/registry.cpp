#include "lplab/experiments/experiment.h"

#include <string>

namespace lplab::experiments {

const std::vector<Experiment>& experiments() {
  // The order of `lplab list` and of the report: what a format is and
  // costs, what it does to values, then what it does to computations, then
  // speed on this machine.
  static const std::vector<Experiment> all = {
      footprint_experiment(),    underflow_experiment(), error_experiment(),
      matmul_error_experiment(), training_experiment(),  accounting_experiment(),
      roofline_experiment(),     throughput_experiment(),
  };
  return all;
}

const Experiment* find_experiment(std::string_view name) {
  // matmul-error and matmul_error name the same experiment.
  std::string key(name);
  for (char& c : key)
    if (c == '-') c = '_';
  for (const Experiment& e : experiments())
    if (e.name == key) return &e;
  return nullptr;
}

}  // namespace lplab::experiments
