// The golden vectors of scripts/mmasim-goldens.py (MMA-Sim 2.1.1's outputs
// for every matrix-unit preset; the script's docstring gives the layout), and
// their comparison with lplab's models: the committed file in the quick tests,
// a freshly generated one in the live test (tests/kernels/mma_live.sh).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lplab/kernels/mma.h"

namespace lplab::test {

struct MmaInputSet {
  std::string name;
  int wa = 0, wb = 0, wc = 0, ws = 0;  // code widths in bytes
  std::uint32_t m = 0, n = 0, K = 0, block = 0;
  std::vector<std::uint64_t> A, B, C, SA, SB;  // row-major codes
};

struct MmaGoldenPreset {
  std::string name;
  std::uint32_t input = 0, blob = 0, k = 0, steps = 0;
};

struct MmaGoldens {
  std::vector<MmaInputSet> inputs;
  std::vector<std::vector<std::uint8_t>> blobs;
  std::vector<MmaGoldenPreset> presets;
};

class MmaGoldenReader {
 public:
  explicit MmaGoldenReader(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open");
    data_.assign(std::istreambuf_iterator<char>(f), {});
    if (data_.size() < 12 || std::memcmp(data_.data(), "LPLABMMA", 8) != 0)
      throw std::runtime_error(path + ": not an lplab MMA golden file");
    pos_ = 8;
    if (u(4) != 1) throw std::runtime_error(path + ": version is not 1");
  }
  std::uint64_t u(int bytes) {
    if (pos_ + static_cast<std::size_t>(bytes) > data_.size()) throw std::runtime_error("golden file truncated");
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(bytes);
    return v;
  }
  std::string str() {
    const auto n = static_cast<std::size_t>(u(2));
    if (pos_ + n > data_.size()) throw std::runtime_error("golden file truncated");
    std::string s(data_.data() + pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<std::uint64_t> codes(std::size_t count, int width) {
    std::vector<std::uint64_t> v(count);
    for (auto& x : v) x = u(width);
    return v;
  }
  MmaGoldens read() {
    MmaGoldens g;
    for (auto n = u(4); n > 0; --n) {
      MmaInputSet s;
      s.name = str();
      s.wa = static_cast<int>(u(1)), s.wb = static_cast<int>(u(1)), s.wc = static_cast<int>(u(1));
      s.ws = static_cast<int>(u(1));
      s.m = static_cast<std::uint32_t>(u(4)), s.n = static_cast<std::uint32_t>(u(4));
      s.K = static_cast<std::uint32_t>(u(4)), s.block = static_cast<std::uint32_t>(u(4));
      s.A = codes(std::size_t{s.m} * s.K, s.wa);
      s.B = codes(std::size_t{s.K} * s.n, s.wb);
      s.C = codes(std::size_t{s.m} * s.n, s.wc);
      if (s.ws) {
        s.SA = codes(std::size_t{s.m} * (s.K / s.block), s.ws);
        s.SB = codes(std::size_t{s.K / s.block} * s.n, s.ws);
      }
      g.inputs.push_back(std::move(s));
    }
    for (auto n = u(4); n > 0; --n) {
      const auto bytes = static_cast<std::size_t>(u(4));
      if (pos_ + bytes > data_.size()) throw std::runtime_error("golden file truncated");
      g.blobs.emplace_back(data_.begin() + static_cast<std::ptrdiff_t>(pos_),
                           data_.begin() + static_cast<std::ptrdiff_t>(pos_ + bytes));
      pos_ += bytes;
    }
    for (auto n = u(4); n > 0; --n) {
      MmaGoldenPreset p;
      p.name = str();
      p.input = static_cast<std::uint32_t>(u(4)), p.blob = static_cast<std::uint32_t>(u(4));
      p.k = static_cast<std::uint32_t>(u(4)), p.steps = static_cast<std::uint32_t>(u(4));
      if (p.input >= g.inputs.size() || p.blob >= g.blobs.size()) throw std::runtime_error("golden file: bad index");
      g.presets.push_back(std::move(p));
    }
    return g;
  }

 private:
  std::string data_;
  std::size_t pos_ = 0;
};

// Where D's NaN has defined bits (MMA-Sim canonicalises it): every algorithm
// but those that run IEEE operations (fma, ftz_pairs) or keep the IEEE sum's
// NaN (exact).
inline bool nan_bits_defined(const kernels::MmaModel& m) {
  using kernels::MmaAlgorithm;
  return m.algorithm != MmaAlgorithm::fma && m.algorithm != MmaAlgorithm::ftz_pairs &&
         m.algorithm != MmaAlgorithm::exact;
}

inline bool is_nan_code(kernels::MmaType t, std::uint64_t c) {
  if (t == kernels::MmaType::f16) return (c & 0x7C00) == 0x7C00 && (c & 0x3FF) != 0;
  if (t == kernels::MmaType::f32) return (c & 0x7F800000u) == 0x7F800000u && (c & 0x7FFFFFu) != 0;
  return (c & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (c & 0xFFFFFFFFFFFFFull) != 0;
}

struct MmaComparison {
  std::size_t evaluations = 0, differing = 0;
  std::string first;  // the first differing output, in full
};

inline std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// Every output of `p` through `instr` (whose model may be altered) against
// the golden codes.
inline MmaComparison compare_preset(const MmaGoldens& g, const MmaGoldenPreset& p,
                                    const kernels::MmaInstruction& instr) {
  using namespace kernels;
  const MmaInputSet& s = g.inputs[p.input];
  const std::vector<std::uint8_t>& blob = g.blobs[p.blob];
  const int wd = mma_type_info(instr.d).bytes;
  MmaComparison r;
  const std::size_t K = s.K, blocks = s.block ? K / s.block : 0;
  std::vector<double> a(K), b(K), sa(blocks), sb(blocks);
  // After the first instruction, C is D's value (the chain's register).
  MmaInstruction later = instr;
  later.model.emin_c = later.model.emin_d;
  for (std::uint32_t i = 0; i < s.m; ++i)
    for (std::uint32_t j = 0; j < s.n; ++j) {
      for (std::size_t t = 0; t < K; ++t) {
        a[t] = mma_decode(instr.a, s.A[i * K + t]);
        b[t] = mma_decode(instr.b, s.B[t * s.n + j]);
      }
      for (std::size_t q = 0; q < blocks; ++q) {
        sa[q] = mma_decode(instr.scale, s.SA[i * blocks + q]);
        sb[q] = mma_decode(instr.scale, s.SB[q * s.n + j]);
      }
      double c = mma_decode(instr.c, s.C[i * s.n + j]);
      for (std::uint32_t step = 0; step < p.steps; ++step) {
        const std::size_t first = std::size_t{step} * p.k;
        const std::size_t bf = s.block ? first / s.block : 0, bn = s.block ? p.k / s.block : 0;
        c = mma_chain(step == 0 ? instr : later, std::span(a).subspan(first, p.k), std::span(b).subspan(first, p.k), c,
                      std::span(sa).subspan(bf, bn), std::span(sb).subspan(bf, bn));
        // The next instruction reads C as a value of D's type.
        const std::uint64_t got = mma_encode(instr.d, c);
        c = mma_decode(instr.d, got);
        std::uint64_t want = 0;
        const std::size_t at = ((std::size_t{step} * s.m + i) * s.n + j) * static_cast<std::size_t>(wd);
        for (int byte = 0; byte < wd; ++byte) want |= static_cast<std::uint64_t>(blob[at + byte]) << (8 * byte);
        ++r.evaluations;
        const bool same = got == want || (!nan_bits_defined(instr.model) && is_nan_code(instr.d, got) &&
                                          is_nan_code(instr.d, want));
        if (same) continue;
        if (r.differing++ == 0) {
          std::ostringstream o;
          o << "instruction " << step + 1 << " of " << p.steps << ", D[" << i << "][" << j << "]: MMA-Sim "
            << hex(want) << " (" << mma_decode(instr.d, want) << "), lplab " << hex(got) << " (" << c
            << ");\n  A row " << i << " codes:";
          for (std::size_t t = first; t < first + p.k; ++t) o << ' ' << hex(s.A[i * K + t]);
          o << "\n  B column " << j << " codes:";
          for (std::size_t t = first; t < first + p.k; ++t) o << ' ' << hex(s.B[t * s.n + j]);
          o << "\n  C (before instruction 1) " << hex(s.C[i * s.n + j]);
          if (blocks) {
            o << "\n  scales of A:";
            for (std::size_t q = bf; q < bf + bn; ++q) o << ' ' << hex(s.SA[i * blocks + q]);
            o << "; of B:";
            for (std::size_t q = bf; q < bf + bn; ++q) o << ' ' << hex(s.SB[q * s.n + j]);
          }
          r.first = o.str();
        }
      }
    }
  return r;
}

}  // namespace lplab::test
