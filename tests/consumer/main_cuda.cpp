// Uses the installed CUDA backend: lists the CUDA devices, or says why there
// are none.
#include <lplab/cuda.h>

#include <cstdio>
#include <string>

int main() {
  std::string why;
  const auto devices = lplab::cuda::devices(&why);
  if (devices.empty()) std::printf("lplab::cuda: no device (%s)\n", why.c_str());
  for (const auto& d : devices) std::printf("lplab::cuda: %s, sm_%d%d\n", d.name.c_str(), d.major, d.minor);
  return 0;
}
