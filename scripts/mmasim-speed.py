#!/usr/bin/env python3
"""MMA-Sim 2.1.1's throughput beside lplab's, on a dozen presets that cover
every algorithm MMA-Sim models without block scales (truncated with fp32,
E8M13 and fp16 D; exact; ftz_pairs; fma in fp32 and fp64; two_stage;
two_stage_split).

    build/mmasim-venv/bin/python scripts/mmasim-speed.py [build/release/benchmarks/mma_bench]

Times MMA-Sim's op(A, B, C) on one thread (torch.set_num_threads(1)) at
m = n = 128, k = 512 (MMA-Sim expands A and B to m x n x k, so 512^3 would
take 1 GiB per operand), N(0,1) operands rounded to the operand type, best
of 3; then runs lplab's mma_bench on the same presets at 256^3 on one
thread, and prints products per second for each and the ratio.
"""
import re
import subprocess
import sys
import time

import torch
from mmasim.amd import MFMA
from mmasim.nv_ptx import MMA, WGMMA

torch.set_num_threads(1)
M = N = 128
K = 512
f16, bf16, f32, f64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
e4m3, fp8 = torch.float8_e4m3fn, torch.float8_e4m3fnuz
# lplab's name, MMA-Sim's instruction, the operands' and C's torch types.
CASES = [
    ("hopper.wgmma.f32.e4m3.e4m3", lambda: WGMMA("Hopper", "m64n8k32.f32.e4m3.e4m3"), e4m3, f32),
    ("hopper.wgmma.f32.bf16.bf16", lambda: WGMMA("Hopper", "m64n8k16.f32.bf16.bf16"), bf16, f32),
    ("hopper.wgmma.f16.f16.f16", lambda: WGMMA("Hopper", "m64n8k16.f16.f16.f16"), f16, f16),
    ("ada.mma.m16n8k32.f32.e4m3.e4m3.f32", lambda: MMA("Ada Lovelace", "m16n8k32.f32.e4m3.e4m3.f32"), e4m3, f32),
    ("ampere.mma.m16n8k16.f32.bf16.bf16.f32", lambda: MMA("Ampere", "m16n8k16.f32.bf16.bf16.f32"), bf16, f32),
    ("volta.mma.m8n8k4.f32.f16.f16.f32", lambda: MMA("Volta", "m8n8k4.f32.f16.f16.f32"), f16, f32),
    ("cdna1.mfma.f32_32x32x8f16", lambda: MFMA("CDNA1", "f32_32x32x8f16"), f16, f32),
    ("cdna2.mfma.f32_32x32x8bf16_1k", lambda: MFMA("CDNA2", "f32_32x32x8bf16_1k"), bf16, f32),
    ("cdna2.mfma.f32_32x32x2f32", lambda: MFMA("CDNA2", "f32_32x32x2f32"), f32, f32),
    ("cdna3.mfma.f32_32x32x8_bf16", lambda: MFMA("CDNA3", "f32_32x32x8_bf16"), bf16, f32),
    ("cdna3.mfma.f32_32x32x16_fp8_fp8", lambda: MFMA("CDNA3", "f32_32x32x16_fp8_fp8"), fp8, f32),
    ("cdna3.mfma.f64_16x16x4_f64", lambda: MFMA("CDNA3", "f64_16x16x4_f64"), f64, f64),
]

mmasim = {}
for name, make, dtype, ctype in CASES:
    op = make()
    a = torch.randn(M, K, dtype=f64 if dtype == f64 else f32).to(dtype)
    b = torch.randn(K, N, dtype=f64 if dtype == f64 else f32).to(dtype)
    c = torch.zeros(M, N, dtype=ctype)
    op(a[:8, :], b[:, :8], c[:8, :8])  # warm-up
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        op(a, b, c)
        best = min(best, time.perf_counter() - t)
    mmasim[name] = M * N * K / best
    print(f"MMA-Sim {name:40s} {mmasim[name] / 1e6:10.2f} M products/s  ({best:.2f} s for {M}x{N}x{K})", flush=True)

bench = sys.argv[1] if len(sys.argv) > 1 else "build/release/benchmarks/mma_bench"
pattern = "|".join(re.escape(name) + "/" for name, *_ in CASES)
run = subprocess.run([bench, f"--benchmark_filter=mma/({pattern})", "--warmup=10"], capture_output=True, text=True,
                     check=True)
lplab = {}
for line in run.stdout.splitlines():
    parts = line.split()
    if len(parts) > 2 and parts[0] in mmasim:
        lplab[parts[0]] = float(parts[1]) * 1e9 / 2  # GFLOP/s at 256^3 -> products/s
cpu = next((line for line in run.stdout.splitlines() if line.startswith("CPU:")), "CPU: ?")
print(f"\n{cpu}")
print(f"{'preset':42s} {'MMA-Sim M/s':>12s} {'lplab M/s':>12s} {'lplab / MMA-Sim':>16s}")
for name, *_ in CASES:
    ratio = lplab.get(name, float("nan")) / mmasim[name]
    print(f"{name:42s} {mmasim[name] / 1e6:12.2f} {lplab.get(name, float('nan')) / 1e6:12.1f} {ratio:16.0f}x")
