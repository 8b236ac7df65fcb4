// The formats of block and tensor scaling (scaling.h), each list declared
// once: the element formats of every scheme, and the (element, scale) pairs
// of block scaling. The concepts below, the CPU library's instantiations
// (kernels/src/scaling.cpp), the CUDA backend's (cuda/src/scaling.cu) and the
// lists that error messages print are all generated from these two lists, so
// that a pair added here is compiled, accepted and named everywhere at once.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "lplab/formats.h"
#include "lplab/kernels/packed.h"

namespace lplab::kernels {

// The element formats of block, tensor, delayed and tile scaling: the OCP
// FP8/FP6/FP4 types and the fnuz FP8 types. Each has a smallest subnormal of
// at least 2^-16, which scaling.h's multiply-then-round argument relies on
// (scale_rules::Constants asserts it for every pair).
#define LPLAB_SCALING_ELEMENTS(X)                                                   \
  X(float8_e4m3fn) X(float8_e5m2) X(float8_e4m3fnuz) X(float8_e5m2fnuz) X(float6_e2m3fn) \
  X(float6_e3m2fn) X(float4_e2m1fn)

// The (element, scale) pairs of block scaling, X(element, scale, storage):
// E8M0 scales are OCP MX v1.0's, E4M3 scales NVFP4's (arXiv 2509.25149);
// every element format takes either. UE5M3 scales (NVIDIA's next
// generation, PTX ISA 13.4 preview) pair with E2M1 and E4M3: a further
// element is one more line here. float32 scales (DeepSeek-V3's tiles,
// Transformer Engine's Float8BlockScaling) pair with the two OCP FP8s. `storage` is `packed` where the
// elements are stored packed (packed.h: FP6 and FP4), which adds
// quantize_packed and dequantize_packed for the pair, and `bytes` otherwise
// (checked against packed.h below).
#define LPLAB_BLOCK_PAIRS(X)                  \
  X(float8_e4m3fn, float8_e8m0fnu, bytes)     \
  X(float8_e4m3fn, float8_e4m3fn, bytes)      \
  X(float8_e5m2, float8_e8m0fnu, bytes)       \
  X(float8_e5m2, float8_e4m3fn, bytes)        \
  X(float8_e4m3fnuz, float8_e8m0fnu, bytes)   \
  X(float8_e4m3fnuz, float8_e4m3fn, bytes)    \
  X(float8_e5m2fnuz, float8_e8m0fnu, bytes)   \
  X(float8_e5m2fnuz, float8_e4m3fn, bytes)    \
  X(float6_e2m3fn, float8_e8m0fnu, packed)    \
  X(float6_e2m3fn, float8_e4m3fn, packed)     \
  X(float6_e3m2fn, float8_e8m0fnu, packed)    \
  X(float6_e3m2fn, float8_e4m3fn, packed)     \
  X(float4_e2m1fn, float8_e8m0fnu, packed)    \
  X(float4_e2m1fn, float8_e4m3fn, packed)    \
  X(float4_e2m1fn, float8_e5m3fnu, packed)   \
  X(float8_e4m3fn, float8_e5m3fnu, bytes)     \
  X(float8_e4m3fn, float32, bytes)            \
  X(float8_e5m2, float32, bytes)

namespace detail {
template <class T, class... List>
inline constexpr bool one_of = (std::same_as<T, List> || ...);

// The storage column of LPLAB_BLOCK_PAIRS, as a value.
enum class PairStorage { bytes, packed };

#define LPLAB_KERNELS_ELEMENT_TYPE(E) , E
#define LPLAB_KERNELS_PAIR_SCALE_TYPE(E, S, storage) , S
#define LPLAB_KERNELS_PAIR_MATCH(E, S, storage) || (std::same_as<Elem, E> && std::same_as<Scale, S>)
template <class Elem, class Scale>
inline constexpr bool is_block_pair = false LPLAB_BLOCK_PAIRS(LPLAB_KERNELS_PAIR_MATCH);
}  // namespace detail

// An element format of scaling, a scale format of block scaling, and a pair
// that block scaling compiles.
template <class T>
concept BlockElement = detail::one_of<T LPLAB_SCALING_ELEMENTS(LPLAB_KERNELS_ELEMENT_TYPE)>;
template <class T>
concept BlockScale = detail::one_of<T LPLAB_BLOCK_PAIRS(LPLAB_KERNELS_PAIR_SCALE_TYPE)>;
template <class Elem, class Scale>
concept BlockPair = detail::is_block_pair<Elem, Scale>;
#undef LPLAB_KERNELS_PAIR_MATCH
#undef LPLAB_KERNELS_PAIR_SCALE_TYPE
#undef LPLAB_KERNELS_ELEMENT_TYPE

// Every pair's element is a scaling element, and its storage column says
// what packed.h does.
#define LPLAB_KERNELS_PAIR_CHECK(E, S, storage)                                                           \
  static_assert(BlockElement<E>, #E " is paired in LPLAB_BLOCK_PAIRS but not in LPLAB_SCALING_ELEMENTS"); \
  static_assert(PackedFormat<E> == (detail::PairStorage::storage == detail::PairStorage::packed),         \
                #E ": LPLAB_BLOCK_PAIRS' storage column disagrees with packed.h");
LPLAB_BLOCK_PAIRS(LPLAB_KERNELS_PAIR_CHECK)
#undef LPLAB_KERNELS_PAIR_CHECK

// The lists by catalog name, for messages, listings and tests.
struct BlockPairName {
  std::string_view element, scale;
  bool packed;
};
#define LPLAB_KERNELS_PAIR_NAME(E, S, storage) \
  {#E, #S, detail::PairStorage::storage == detail::PairStorage::packed},
inline constexpr BlockPairName kBlockPairs[] = {LPLAB_BLOCK_PAIRS(LPLAB_KERNELS_PAIR_NAME)};
#undef LPLAB_KERNELS_PAIR_NAME
#define LPLAB_KERNELS_ELEMENT_NAME(E) #E,
inline constexpr std::string_view kScalingElements[] = {LPLAB_SCALING_ELEMENTS(LPLAB_KERNELS_ELEMENT_NAME)};
#undef LPLAB_KERNELS_ELEMENT_NAME

// "float8_e4m3fn, float8_e5m2, ..., float4_e2m1fn": the element formats.
inline std::string scaling_elements_text() {
  std::string s;
  for (std::string_view e : kScalingElements) s.append(s.empty() ? "" : ", ").append(e);
  return s;
}

// "float8_e4m3fn with float8_e8m0fnu or float8_e4m3fn scales; float8_e5m2
// with ...": the pairs, by element in the list's order.
inline std::string block_pairs_text() {
  std::string s;
  for (const BlockPairName& p : kBlockPairs) {
    bool seen = false;
    for (const BlockPairName& q : kBlockPairs) {
      if (&q == &p) break;
      seen |= q.element == p.element;
    }
    if (seen) continue;
    s.append(s.empty() ? "" : "; ").append(p.element).append(" with ");
    bool first = true;
    for (const BlockPairName& q : kBlockPairs) {
      if (q.element != p.element) continue;
      s.append(first ? "" : " or ").append(q.scale);
      first = false;
    }
    s.append(" scales");
  }
  return s;
}

}  // namespace lplab::kernels
