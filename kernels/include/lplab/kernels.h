// lplab kernels: whole-tensor work on the formats of lplab/formats.h.
//
//   convert.h  bulk conversion float <-> formats <-> formats, SIMD, every policy
//   elementwise.h  relu, gelu, square, sqrt, ..., add, axpy, triu, sum, mean, amax on views
//   ops.h      the op bodies as LPLAB_HD functors (host and device)
//   matmul.h   mixed-precision matmul with emulated accumulators (fp64, fp32, fp16, bf16, tensor core)
//   random.h   the counter-based random bits of stochastic rounding
//   packed.h   fp4 two to a byte, fp6 four to three bytes (OCP MX storage)
//   scaling.h  block and tensor scaling: MXFP8/6/4, NVFP4, per-tensor fp8
//   targets.h  the SIMD targets and the one dispatch point
//   view.h     strided N-d views (shape, strides in elements) and contiguous copies
#pragma once

#include "lplab/formats.h"
#include "lplab/kernels/accumulator.h"
#include "lplab/kernels/convert.h"
#include "lplab/kernels/cvt_rs.h"
#include "lplab/kernels/elementwise.h"
#include "lplab/kernels/four_over_six.h"
#include "lplab/kernels/hadamard.h"
#include "lplab/kernels/matmul.h"
#include "lplab/kernels/ops.h"
#include "lplab/kernels/packed.h"
#include "lplab/kernels/probes.h"
#include "lplab/kernels/random.h"
#include "lplab/kernels/scale_layout.h"
#include "lplab/kernels/scaling.h"
#include "lplab/kernels/targets.h"
#include "lplab/kernels/view.h"
