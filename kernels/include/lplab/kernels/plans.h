// One plan per operation, for every backend: the checks an operation makes
// before any work, with their one wording, and what its loops need that is
// not per-element math -- sizes, k padded to whole instructions, the
// instruction, the tensor scale. The CPU kernels (kernels/src) and the CUDA
// backend (lplab/cuda.h) both call these, so that their errors and their
// prologues cannot drift apart; each backend keeps only its loops and its
// memory. The per-element rules are the LPLAB_HD headers (scale_rules.h,
// mma_step.h, tensor_core_step.h), and the tensor-core accumulator's plan is
// tensor_core_model (matmul.h).
//
// Every plan throws std::invalid_argument: conversion's and scaling's
// messages read "lplab::kernels::<operation>: <what>", matmul's "matmul:
// <what>", on either backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "lplab/kernels/convert.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/mma.h"
#include "lplab/kernels/scaling.h"

namespace lplab::kernels {

// ---------------------------------------------------------------------------
// Conversion (convert.h): input and output of one length.
inline void plan_convert(std::size_t in, std::size_t out) { detail::check_sizes(in, out); }

// ---------------------------------------------------------------------------
// Block scaling (scaling.h): quantize, dequantize and their packed forms.

struct BlockPlan {
  std::size_t n = 0;           // elements
  std::size_t block_size = 0;  // at least 1: elements of a block along a row
  std::size_t block_rows = 1;  // at least 1: rows of a block
  std::size_t cols = 0;        // the row length; 0 for the flat form (one run of n)
  std::size_t rows = 0;        // ceil(n / cols) with cols, else 1 (0 for n = 0)
  std::size_t blocks = 0;      // scales: ceil(n / block_size), or ceil(rows / block_rows) * ceil(cols / block_size)
  // Blocks across a row: ceil(cols / block_size), or all of them in the flat form.
  constexpr std::size_t across() const noexcept { return cols == 0 ? blocks : (cols + block_size - 1) / block_size; }
  // Whether the blocks and scales are the flat form's runs: one-row blocks
  // that tile every row exactly (a short last row has empty blocks after it
  // in the matrix form, none in the flat one).
  constexpr bool flat() const noexcept {
    return block_rows == 1 && (cols == 0 || (cols % block_size == 0 && n % cols == 0));
  }
  ScaleRule rule = ScaleRule::floor;
  bool tensor_scale = false;   // a second-level tensor scale, from the tensor's amax
  // Transformer Engine's order (amax_ratio_te), which keeps the tensor's amax.
  constexpr bool te() const noexcept { return rule == ScaleRule::amax_ratio_te; }
};

// A quantize call's tensor scale: s_enc, which the blocks' scales are
// computed with (1 without a tensor scale), and what quantize writes to
// *tensor_scale -- s_enc, or for amax_ratio_te the tensor's amax, from which
// TE derives s_enc and the dequantization.
struct TensorEncoding {
  float s_enc = 1.0f;
  float stored = 1.0f;
};

// The tensor scale from the tensor's amax as |x|'s bits (scale_rules.h; the
// amax is read only by a plan with a tensor scale).
template <class Elem, class Scale>
constexpr TensorEncoding tensor_encoding(const BlockPlan& p, std::uint32_t amax_bits) noexcept {
  if (!p.tensor_scale) return {};
  if (p.te()) return {scale_rules::encode_scale_te<Elem, Scale>(amax_bits), scale_rules::float_of(amax_bits)};
  const float s_enc = scale_rules::encode_scale<Elem, Scale>(amax_bits);
  return {s_enc, s_enc};
}

namespace detail {
// An operand's length, checked ("<fn>: <what> has <given> elements,
// expected <expected>").
struct Extent {
  const char* what;
  std::size_t expected, given;
};
void check_extent(const char* fn, const Extent& e);
// The scheme's parts a plan checks.
struct BlockShapeRule {
  int block_size, block_rows;
  ScaleRule rule;
  bool tensor_scale;
  bool fp32_scale;  // the scale format is float32
};
template <class Elem, class Scale>
constexpr BlockShapeRule shape_rule(const BlockScaling<Elem, Scale>& s) noexcept {
  return {s.block_size, s.block_rows, s.rule, s.tensor_scale, std::same_as<Scale, float32>};
}
// The checks of a block-scaling call, in this order: the scheme (block_size
// and block_rows at least 1; blocks of more than one row only with the row
// length, cols > 0; a tensor scale with amax_ratio or amax_ratio_te, which
// needs one; deepseek, te_fp32 and te_fp32_pow2 with float32 scales), the row length where given (at least 1 for n > 0), the data
// operand, the scales, and for quantize an output for the tensor scale where
// the scheme has one. cols = 0 is the flat form.
BlockPlan make_block_plan(const char* fn, const BlockShapeRule& s, std::size_t n, std::size_t cols, Extent data,
                          std::size_t scales, bool quantizing, bool tensor_scale_output);
}  // namespace detail

// quantize(s, x, elems, scales, tensor_scale) for x of n elements (cols: the
// row length of the overloads that take it; 0 for the flat form).
template <BlockElement Elem, BlockScale Scale>
BlockPlan plan_block_quantize(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t elems,
                              std::size_t scales, const float* tensor_scale, std::size_t cols = 0) {
  return detail::make_block_plan("quantize", detail::shape_rule(s), n, cols, {"elems", n, elems}, scales, true,
                                 tensor_scale != nullptr);
}
// dequantize(s, elems, scales, y) for n elements.
template <BlockElement Elem, BlockScale Scale>
BlockPlan plan_block_dequantize(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t scales,
                                std::size_t y, std::size_t cols = 0) {
  return detail::make_block_plan("dequantize", detail::shape_rule(s), n, cols, {"y", n, y}, scales, false, false);
}
// quantize_packed and dequantize_packed for n elements (`bytes` of packed
// codes: dequantize_packed's unpacking checks its own).
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
BlockPlan plan_block_quantize_packed(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t bytes,
                                     std::size_t scales, const float* tensor_scale, std::size_t cols = 0) {
  return detail::make_block_plan("quantize_packed", detail::shape_rule(s), n, cols,
                                 {"the byte span", packed_bytes<Elem>(n), bytes}, scales, true,
                                 tensor_scale != nullptr);
}
template <BlockElement Elem, BlockScale Scale>
  requires PackedFormat<Elem>
BlockPlan plan_block_dequantize_packed(const BlockScaling<Elem, Scale>& s, std::size_t n, std::size_t scales,
                                       std::size_t cols = 0) {
  return detail::make_block_plan("dequantize_packed", detail::shape_rule(s), n, cols, {nullptr, 0, 0}, scales,
                                 false, false);
}

// ---------------------------------------------------------------------------
// Per-tensor scaling (TensorScaling).

struct TensorPlan {
  std::size_t n = 0;
  AmaxSource source = AmaxSource::current;
  float history_amax = 0.0f;  // history_max: the history's amax; history_most_recent: history[0]
  // The amax the scale follows, given the tensor's own.
  constexpr float amax(float current) const noexcept {
    return source == AmaxSource::current ? current : history_amax;
  }
};

namespace detail {
TensorPlan make_tensor_plan(AmaxSource source, std::size_t n, std::size_t out, std::span<const float> history);
}  // namespace detail

// quantize(s, x, out, history) for x of n elements: out holds n, and a
// history source has a non-empty history.
template <BlockElement Elem>
TensorPlan plan_tensor_quantize(const TensorScaling<Elem>& s, std::size_t n, std::size_t out,
                                std::span<const float> history) {
  return detail::make_tensor_plan(s.amax, n, out, history);
}
// dequantize(s, elems, scale, y) for n elements: y holds n.
inline std::size_t plan_tensor_dequantize(std::size_t n, std::size_t y) {
  detail::check_extent("dequantize", {"y", n, y});
  return n;
}

// ---------------------------------------------------------------------------
// Matmul with Accumulator::instruction (mma.h), on options check_matmul has
// passed: the instruction, chained over k padded with zero products to whole
// instructions, one chain per output.

struct InstructionPlan {
  const MmaInstruction* instruction = nullptr;
  std::size_t k_padded = 0;  // k rounded up to a multiple of the instruction's k
  bool scaled = false;       // a block-scaled instruction

  // A's rows and B's columns (B transposed), each as k_padded doubles with
  // zero padding: what one output's chain reads.
  std::vector<double> padded_rows_of_a(const MatmulProblem& p) const;
  std::vector<double> padded_columns_of_b(const MatmulProblem& p) const;
};

// Checks that the caller gives block scales exactly when the instruction
// takes them (`block_scales`), and that every value of A, B and the input C
// is one the instruction's types hold (the unit reads nothing else).
InstructionPlan plan_instruction_matmul(const MatmulProblem& p, const MatmulOptions& o, bool block_scales);

}  // namespace lplab::kernels
