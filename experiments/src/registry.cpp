#include "lplab/lab/experiment.h"

#include <algorithm>
#include <string>

namespace lplab::experiments {

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all = [] {
    std::vector<Experiment> v = experiment_files();
    std::stable_sort(v.begin(), v.end(), [](const Experiment& a, const Experiment& b) {
      return a.place != b.place ? a.place < b.place : a.name < b.name;
    });
    return v;
  }();
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
