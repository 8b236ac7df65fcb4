#!/usr/bin/env python3
"""MMA-Sim 2.1.1's own throughput on a matmul, for the ratio to lplab's.

    build/mmasim-venv/bin/python scripts/mmasim-speed.py

Times MMA-Sim's op(A, B, C) on one thread (torch.set_num_threads(1)) for a
few presets at m = n = 128, k = 512 (MMA-Sim expands A and B to m x n x k,
so 512^3 would take 1 GiB per operand), and prints products per second;
build/release/benchmarks/matmul_bench times lplab on the same presets at
512^3 (GFLOP/s / 2 = products per second).
"""
import time

import torch
from mmasim.amd import MFMA
from mmasim.nv_ptx import MMA, WGMMA

torch.set_num_threads(1)
M = N = 128
K = 512
CASES = [
    ("hopper.wgmma.f32.e4m3.e4m3", lambda: WGMMA("Hopper", "m64n8k32.f32.e4m3.e4m3"), torch.float8_e4m3fn),
    ("ampere.mma.m16n8k16.f32.bf16.bf16.f32", lambda: MMA("Ampere", "m16n8k16.f32.bf16.bf16.f32"), torch.bfloat16),
    ("hopper.wgmma.f16.f16.f16", lambda: WGMMA("Hopper", "m64n8k16.f16.f16.f16"), torch.float16),
    ("cdna3.mfma.f32_32x32x8_bf16", lambda: MFMA("CDNA3", "f32_32x32x8_bf16"), torch.bfloat16),
]
for name, make, dtype in CASES:
    op = make()
    a = torch.randn(M, K).to(dtype)
    b = torch.randn(K, N).to(dtype)
    c = torch.zeros(M, N, dtype=torch.float16 if ".f16.f16.f16" in name else torch.float32)
    op(a[:8, :], b[:, :8], c[:8, :8])  # warm-up
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        op(a, b, c)
        best = min(best, time.perf_counter() - t)
    print(f"{name:45s} {M * N * K / best / 1e6:10.2f} M products/s  ({best:.2f} s for {M}x{N}x{K})")
