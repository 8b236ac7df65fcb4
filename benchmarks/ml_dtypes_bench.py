#!/usr/bin/env python3
"""lplab's bulk conversions beside ml_dtypes 0.6's numpy astype, in one run.

For every conversion ml_dtypes has (float32 to and from bfloat16, float16,
E4M3, E5M2 and E2M1), in cache (16K values) and out of cache (16M values):
the rate of ``x.astype(dtype)`` (best of several runs) and the rates of
lplab's kernels_bench on every SIMD target of this CPU (one thread each),
then a table of both and their ratio, with the CPU model. Without numpy and
ml_dtypes it prints SKIPPED and exits 0.

    build/pyenv/bin/python benchmarks/ml_dtypes_bench.py [build/release/benchmarks/kernels_bench]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

KERNELS_BENCH = sys.argv[1] if len(sys.argv) > 1 else "build/release/benchmarks/kernels_bench"
SIZES = (16384, 16777216)

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: ml_dtypes and numpy are not importable here ({e}); "
          "pip install ml_dtypes==0.6.0 numpy (scripts/test.sh makes build/pyenv with them)")
    sys.exit(0)

# (kernels_bench's name, ml_dtypes' type, direction): "from" is float32 -> type.
CONVERSIONS = [
    ("float->bf16", ml_dtypes.bfloat16, "from"),
    ("float->fp16 rne", np.float16, "from"),
    ("float->e4m3", ml_dtypes.float8_e4m3fn, "from"),
    ("float->e5m2", ml_dtypes.float8_e5m2, "from"),
    ("float->e2m1", ml_dtypes.float4_e2m1fn, "from"),
    ("bf16->float", ml_dtypes.bfloat16, "to"),
    ("fp16->float", np.float16, "to"),
    ("e4m3->float", ml_dtypes.float8_e4m3fn, "to"),
    ("e5m2->float", ml_dtypes.float8_e5m2, "to"),
    ("e2m1->float", ml_dtypes.float4_e2m1fn, "to"),
]


def inputs(n, dtype):
    """N(0, 1) scaled to a quarter of the type's range, as kernels_bench draws."""
    rng = np.random.default_rng(7)
    top = min(float(ml_dtypes.finfo(dtype).max) / 4, 1e30)
    return (rng.standard_normal(n) * top).astype(np.float32)


def astype_rate(x, dtype):
    """Values per second of x.astype(dtype): the best run of at least 0.3 s of runs."""
    x.astype(dtype)  # warm up (allocation, code paths)
    best, spent = float("inf"), 0.0
    while spent < 0.3:
        t0 = time.perf_counter()
        x.astype(dtype)
        t = time.perf_counter() - t0
        best, spent = min(best, t), spent + t
    return x.size / best


def lplab_rates():
    """{(name, n): [(target, values/s), ...]} from kernels_bench's JSON output."""
    names = "|".join(c[0] for c in CONVERSIONS)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernels_bench.json")
        cmd = [KERNELS_BENCH, f"--benchmark_filter=^bulk/({names})/n:", f"--benchmark_out={path}",
               "--benchmark_out_format=json", "--benchmark_min_time=0.2"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        with open(path) as f:
            out = json.load(f)
    rates = {}
    for b in out["benchmarks"]:
        if "values/s" not in b or b.get("error_occurred"):
            continue
        name, n = b["name"].split("/n:")[0][len("bulk/"):], int(b["name"].split("/n:")[1].split("/")[0])
        rates.setdefault((name, n), []).append((b.get("label", "?"), b["values/s"]))
    return rates, out["context"]


def main():
    rates, context = lplab_rates()
    cpu = context.get("cpu_model", "unknown CPU")
    print(f"CPU: {cpu}; ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}; one thread")
    print(f"{'conversion':<18} {'values':>9} {'target':<8} {'lplab G/s':>10} {'ml_dtypes G/s':>14} {'ratio':>7}")
    slower = []
    for name, dtype, direction in CONVERSIONS:
        for n in SIZES:
            x = inputs(n, dtype)
            if direction == "from":
                ml = astype_rate(x, dtype)
            else:
                ml = astype_rate(x.astype(dtype), np.float32)
            for target, r in rates.get((name, n), []):
                print(f"{name:<18} {n:>9} {target:<8} {r / 1e9:>10.3f} {ml / 1e9:>14.3f} {r / ml:>6.2f}x")
                if r < ml:
                    slower.append(f"{name} n={n} {target}")
    print("lplab is faster than ml_dtypes on every conversion and target" if not slower
          else "lplab is slower on: " + ", ".join(slower))


if __name__ == "__main__":
    main()
