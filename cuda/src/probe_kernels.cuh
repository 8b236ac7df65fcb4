// The probe's kernels (probe.cu): one instruction per tile, its operands
// read from row-major codes (A: m x k, B transposed: n x k, C and D: m x n,
// one uint64 each) into the registers or shared memory the instruction
// reads, in the fragment layouts of the PTX ISA ("Matrix fragments for
// mma.m16n8k*", "Matrix fragments for mma.m8n8k4 with .f64", and wgmma's
// "Shared memory matrix layout" without swizzling). g = lane / 4 is the
// fragment's "groupID", t = lane % 4 its "threadID_in_group".
#pragma once

#include <cstdint>

namespace lplab::cuda::probe_kernels {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

__device__ inline u32 pack16(u64 lo, u64 hi) { return static_cast<u32>(lo & 0xFFFF) | static_cast<u32>(hi & 0xFFFF) << 16; }
__device__ inline u32 pack8(const u64* v) {
  return static_cast<u32>(v[0] & 0xFF) | static_cast<u32>(v[1] & 0xFF) << 8 | static_cast<u32>(v[2] & 0xFF) << 16 |
         static_cast<u32>(v[3] & 0xFF) << 24;
}
__device__ inline float f32_of(u64 c) { return __uint_as_float(static_cast<u32>(c)); }
__device__ inline u64 code_of(float x) { return __float_as_uint(x); }
__device__ inline double f64_of(u64 c) { return __longlong_as_double(static_cast<long long>(c)); }
__device__ inline u64 code_of(double x) { return static_cast<u64>(__double_as_longlong(x)); }

// C and D of an m16n8 tile (f32/f64: 4 elements; f16: 2 registers of 2):
// element i at row g + 8 (i / 2), column 2 t + i % 2.
__device__ inline int cd_row(int g, int i) { return g + 8 * (i / 2); }
__device__ inline int cd_col(int t, int i) { return 2 * t + i % 2; }

// ---------------------------------------------------------------------------
// 16-bit A and B (f16, bf16), k = 16 or 8.
// k16: A element i (0..7) at row g + 8 ((i / 2) % 2), column 2t + i % 2 + 8 (i / 4);
//      B element i (0..3) at k 2t + i % 2 + 8 (i / 2), column g.
// k8:  A element i (0..3) at row g + 8 (i / 2), column 2t + i % 2; B i (0..1) at k 2t + i.
template <int K>
struct Half {
  static constexpr int kA = K / 2, kB = K / 4;  // elements per thread
  __device__ static void load(const u64* A, const u64* B, int g, int t, u32* a, u32* b) {
    u64 ea[8], eb[4];
    for (int i = 0; i < kA; ++i) {
      const int r = K == 16 ? g + 8 * ((i / 2) % 2) : g + 8 * (i / 2);
      const int c = 2 * t + i % 2 + (K == 16 ? 8 * (i / 4) : 0);
      ea[i] = A[r * K + c];
    }
    for (int i = 0; i < kB; ++i) eb[i] = B[g * K + 2 * t + i % 2 + 8 * (i / 2)];
    for (int r = 0; r < kA / 2; ++r) a[r] = pack16(ea[2 * r], ea[2 * r + 1]);
    for (int r = 0; r < kB / 2; ++r) b[r] = pack16(eb[2 * r], eb[2 * r + 1]);
  }
};

// tf32 (fp32 codes), f64: k = 4, 8 or 16. A element i at row g + 8 (i % 2),
// column t + 4 (i / 2) (k4: row g + 8 i, column t); B element i at k t + 4 i.
// The f64 m8n8k4 form: A (g, t), B (t, g).
template <int K, int M = 16>
struct Wide {
  static constexpr int kA = M * K / 32, kB = K / 4;
  __device__ static int a_row(int g, int i) { return M == 8 ? g : K == 4 ? g + 8 * i : g + 8 * (i % 2); }
  __device__ static int a_col(int t, int i) { return M == 8 || K == 4 ? t : t + 4 * (i / 2); }
};

#define LPLAB_F4(p) "+f"(p[0]), "+f"(p[1]), "+f"(p[2]), "+f"(p[3])
#define LPLAB_D4(p) "+d"(p[0]), "+d"(p[1]), "+d"(p[2]), "+d"(p[3])

// One instruction per kernel: Op::M, N, kK and Op::run(A, B, C, D, lane).
template <bool Bf16, bool F16Acc, int K>
struct MmaHalf {
  static constexpr int M = 16, N = 8;
  static constexpr int kK = K;
  __device__ static void run(const u64* A, const u64* B, const u64* C, u64* D, int lane) {
    const int g = lane / 4, t = lane % 4;
    u32 a[4] = {}, b[2] = {};
    Half<K>::load(A, B, g, t, a, b);
    if constexpr (F16Acc) {
      u32 d[2];
      for (int r = 0; r < 2; ++r)
        d[r] = pack16(C[cd_row(g, 2 * r) * N + cd_col(t, 2 * r)], C[cd_row(g, 2 * r + 1) * N + cd_col(t, 2 * r + 1)]);
      if constexpr (K == 16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
                     : "+r"(d[0]), "+r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"
                     : "+r"(d[0]), "+r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
      for (int i = 0; i < 4; ++i) D[cd_row(g, i) * N + cd_col(t, i)] = (d[i / 2] >> (16 * (i % 2))) & 0xFFFF;
    } else {
      float d[4];
      for (int i = 0; i < 4; ++i) d[i] = f32_of(C[cd_row(g, i) * N + cd_col(t, i)]);
      if constexpr (K == 16 && Bf16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else if constexpr (K == 16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      else if constexpr (Bf16)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                     : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
      else
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                     : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
      for (int i = 0; i < 4; ++i) D[cd_row(g, i) * N + cd_col(t, i)] = code_of(d[i]);
    }
  }
};

template <int K>
struct MmaTf32 {
  static constexpr int M = 16, N = 8, kK = K;
  __device__ static void run(const u64* A, const u64* B, const u64* C, u64* D, int lane) {
    const int g = lane / 4, t = lane % 4;
    using W = Wide<K>;
    u32 a[4] = {}, b[2] = {};
    for (int i = 0; i < W::kA; ++i) a[i] = static_cast<u32>(A[W::a_row(g, i) * K + W::a_col(t, i)]);
    for (int i = 0; i < W::kB; ++i) b[i] = static_cast<u32>(B[g * K + t + 4 * i]);
    float d[4];
    for (int i = 0; i < 4; ++i) d[i] = f32_of(C[cd_row(g, i) * N + cd_col(t, i)]);
    if constexpr (K == 8)
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                   : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
      asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                   : LPLAB_F4(d) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
    for (int i = 0; i < 4; ++i) D[cd_row(g, i) * N + cd_col(t, i)] = code_of(d[i]);
  }
};

// f64: m8n8k4 (sm_80+), m16n8k4/k8/k16 (sm_90+).
template <int Rows, int K>
struct MmaF64 {
  static constexpr int M = Rows, N = 8, kK = K;
  __device__ static void run(const u64* A, const u64* B, const u64* C, u64* D, int lane) {
    const int g = lane / 4, t = lane % 4;
    using W = Wide<K, M>;
    double a[8] = {}, b[4] = {};
    for (int i = 0; i < W::kA; ++i) a[i] = f64_of(A[W::a_row(g, i) * K + W::a_col(t, i)]);
    for (int i = 0; i < W::kB; ++i) b[i] = f64_of(B[g * K + t + 4 * i]);
    if constexpr (M == 8) {
      double d[2];
      for (int i = 0; i < 2; ++i) d[i] = f64_of(C[g * N + 2 * t + i]);
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                   : "+d"(d[0]), "+d"(d[1]) : "d"(a[0]), "d"(b[0]));
      for (int i = 0; i < 2; ++i) D[g * N + 2 * t + i] = code_of(d[i]);
    } else {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
      double d[4];
      for (int i = 0; i < 4; ++i) d[i] = f64_of(C[cd_row(g, i) * N + cd_col(t, i)]);
      if constexpr (K == 4)
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                     : LPLAB_D4(d) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
      else if constexpr (K == 8)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : LPLAB_D4(d) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                     : LPLAB_D4(d) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                       "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
      for (int i = 0; i < 4; ++i) D[cd_row(g, i) * N + cd_col(t, i)] = code_of(d[i]);
#else
      __trap();
#endif
    }
  }
};

// ---------------------------------------------------------------------------
// wgmma (sm_90a): m64n8kK, A and B from shared memory, K-major, no
// swizzling: 8 x 16-byte core matrices, (row / 8, byte / 16) at
// ((row / 8) * 2 + byte / 16) * 128 bytes -- adjacent in K 128 bytes apart
// (the descriptor's leading byte offset), in M or N 256 (its stride byte
// offset). Every type's k is 32 bytes: two core matrices along K.
__device__ inline std::uint32_t core_offset(int row, int byte) {
  return static_cast<std::uint32_t>(((row / 8) * 2 + byte / 16) * 128 + (row % 8) * 16 + byte % 16);
}
__device__ inline u64 descriptor(const void* smem) {
  const auto addr = static_cast<u64>(__cvta_generic_to_shared(smem));
  return ((addr & 0x3FFFF) >> 4) | (u64{128 >> 4} << 16) | (u64{256 >> 4} << 32);  // layout type 0: no swizzle
}

}  // namespace lplab::cuda::probe_kernels

namespace lplab::cuda::probe_kernels {

// wgmma.mma_async m64n8kK on a warpgroup (128 threads): warp w holds D's
// rows 16 w .. 16 w + 15 as an m16n8 fragment (cd_row, cd_col).
// Bytes: element bytes; Asm: the instruction, given the accumulators, the
// two descriptors and scale-d.
template <int Bytes, bool F16Acc, class Asm>
struct Wgmma {
  static constexpr int M = 64, N = 8, kK = 32 / Bytes;
  __device__ static void run(const u64* A, const u64* B, const u64* C, u64* D, int thread) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();  // wgmma exists on sm_90a alone; the host runs this kernel only there
#else
    __shared__ alignas(128) unsigned char sa[64 * 32], sb[8 * 32];
    for (int e = thread; e < M * kK; e += 128) store(sa, e / kK, e % kK, A[e]);
    for (int e = thread; e < N * kK; e += 128) store(sb, e / kK, e % kK, B[e]);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const int w = thread / 32, lane = thread % 32, g = lane / 4, t = lane % 4;
    const u64 da = descriptor(sa), db = descriptor(sb);
    if constexpr (F16Acc) {
      u32 d[2];
      for (int r = 0; r < 2; ++r)
        d[r] = pack16(C[(16 * w + cd_row(g, 2 * r)) * N + cd_col(t, 2 * r)],
                      C[(16 * w + cd_row(g, 2 * r + 1)) * N + cd_col(t, 2 * r + 1)]);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      Asm::f16(d, da, db);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      for (int i = 0; i < 4; ++i)
        D[(16 * w + cd_row(g, i)) * N + cd_col(t, i)] = (d[i / 2] >> (16 * (i % 2))) & 0xFFFF;
    } else {
      float d[4];
      for (int i = 0; i < 4; ++i) d[i] = f32_of(C[(16 * w + cd_row(g, i)) * N + cd_col(t, i)]);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      Asm::f32(d, da, db);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      for (int i = 0; i < 4; ++i) D[(16 * w + cd_row(g, i)) * N + cd_col(t, i)] = code_of(d[i]);
    }
#endif
  }
  __device__ static void store(unsigned char* s, int row, int k, u64 code) {
    const std::uint32_t o = core_offset(row, k * Bytes);
    for (int b = 0; b < Bytes; ++b) s[o + b] = static_cast<unsigned char>(code >> (8 * b));
  }
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LPLAB_WGMMA_F32(name, shape, types, tail)                                                              \
  struct name {                                                                                                \
    __device__ static void f32(float* d, u64 a, u64 b) {                                                       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\nwgmma.mma_async.sync.aligned." shape ".f32." types \
                   " {%0,%1,%2,%3}, %4, %5, p, 1, 1" tail ";\n}"                                               \
                   : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(a), "l"(b), "r"(1) : "memory");            \
    }                                                                                                          \
    __device__ static void f16(u32*, u64, u64) {}                                                             \
  };
#define LPLAB_WGMMA_F16(name, shape, types, tail)                                                              \
  struct name {                                                                                                \
    __device__ static void f16(u32* d, u64 a, u64 b) {                                                         \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\nwgmma.mma_async.sync.aligned." shape ".f16." types \
                   " {%0,%1}, %2, %3, p, 1, 1" tail ";\n}"                                                      \
                   : "+r"(d[0]), "+r"(d[1]) : "l"(a), "l"(b), "r"(1) : "memory");                                     \
    }                                                                                                          \
    __device__ static void f32(float*, u64, u64) {}                                                           \
  };
#else
// Other targets: the kernels exist (the host selects them on sm_90 only) and trap.
#define LPLAB_WGMMA_F32(name, shape, types, tail) \
  struct name {                                   \
    __device__ static void f32(float*, u64, u64) { __trap(); } \
    __device__ static void f16(u32*, u64, u64) { __trap(); }   \
  };
#define LPLAB_WGMMA_F16(name, shape, types, tail) LPLAB_WGMMA_F32(name, shape, types, tail)
#endif
// f16/bf16 take imm-trans-a and imm-trans-b (0: K-major); tf32 and FP8 are K-major only.
LPLAB_WGMMA_F32(WgF32Bf16, "m64n8k16", "bf16.bf16", ", 0, 0")
LPLAB_WGMMA_F32(WgF32F16, "m64n8k16", "f16.f16", ", 0, 0")
LPLAB_WGMMA_F16(WgF16F16, "m64n8k16", "f16.f16", ", 0, 0")
LPLAB_WGMMA_F32(WgF32Tf32, "m64n8k8", "tf32.tf32", "")
LPLAB_WGMMA_F32(WgF32E4E4, "m64n8k32", "e4m3.e4m3", "")
LPLAB_WGMMA_F32(WgF32E4E5, "m64n8k32", "e4m3.e5m2", "")
LPLAB_WGMMA_F32(WgF32E5E4, "m64n8k32", "e5m2.e4m3", "")
LPLAB_WGMMA_F32(WgF32E5E5, "m64n8k32", "e5m2.e5m2", "")
LPLAB_WGMMA_F16(WgF16E4E4, "m64n8k32", "e4m3.e4m3", "")
LPLAB_WGMMA_F16(WgF16E4E5, "m64n8k32", "e4m3.e5m2", "")
LPLAB_WGMMA_F16(WgF16E5E4, "m64n8k32", "e5m2.e4m3", "")
LPLAB_WGMMA_F16(WgF16E5E5, "m64n8k32", "e5m2.e5m2", "")
#undef LPLAB_WGMMA_F32
#undef LPLAB_WGMMA_F16

}  // namespace lplab::cuda::probe_kernels
