#!/usr/bin/env python3
"""The Python package's cost over the C++ API, and its speed beside ml_dtypes.

1. Per call: lplab.convert (the package's function) and _lplab.convert (the
   extension's entry) on 1 and 1024 float32 values into bfloat16, against one
   call of lplab::kernels::convert on as many values (kernels_bench's
   call/float->bf16 rows): the binding's added time per call.
2. Rate: lplab.convert of 16M values against kernels_bench's rate for the
   same conversion and size on the same SIMD target, whose output buffer is
   reused: lplab.convert(x, to, out=buf) does the same; a new result (as
   numpy's astype makes) adds the kernel's first touch of fresh pages.
3. ml_dtypes: every conversion ml_dtypes offers between float32 and a format
   lplab has, both ways, 16K and 16M values, lplab.convert against
   x.astype, one thread each.
Best of repeated runs; the CPU model and the SIMD target head the output.
Without numpy, ml_dtypes or the lplab package it prints SKIPPED and exits 0.

    build/pyenv/bin/python benchmarks/python_bench.py [build/release/benchmarks/kernels_bench]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

KERNELS_BENCH = sys.argv[1] if len(sys.argv) > 1 else "build/release/benchmarks/kernels_bench"

try:
    import ml_dtypes
    import numpy as np

    import lplab
    from lplab import _lplab
except ImportError as e:
    print(f"SKIPPED: {e} (scripts/test.sh installs lplab, numpy and ml_dtypes into build/pyenv)")
    sys.exit(0)

if not os.access(KERNELS_BENCH, os.X_OK):
    print(f"python_bench: {KERNELS_BENCH} is not an executable kernels_bench (give its path)", file=sys.stderr)
    sys.exit(2)

BIG = 1 << 24
SMALL = 1 << 14
# kernels_bench's names of the conversions compared with the C++ API.
CXX = {("float32", "bfloat16"): "float->bf16", ("float32", "float16"): "float->fp16 rne",
       ("float32", "float8_e4m3fn"): "float->e4m3", ("float32", "float8_e5m2"): "float->e5m2",
       ("float32", "float4_e2m1fn"): "float->e2m1", ("bfloat16", "float32"): "bf16->float",
       ("float16", "float32"): "fp16->float", ("float8_e4m3fn", "float32"): "e4m3->float",
       ("float8_e5m2", "float32"): "e5m2->float", ("float4_e2m1fn", "float32"): "e2m1->float"}


def best_seconds(f, min_total=0.3, min_runs=3):
    f()
    best, spent, runs = float("inf"), 0.0, 0
    while spent < min_total or runs < min_runs:
        t0 = time.perf_counter()
        f()
        t = time.perf_counter() - t0
        best, spent, runs = min(best, t), spent + t, runs + 1
    return best


def per_call(f, calls=20000):
    """Seconds per call: the best of 5 batches."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def kernels_bench_rates():
    names = "|".join(CXX.values())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.json")
        subprocess.run([KERNELS_BENCH, f"--benchmark_filter=^(call/float->bf16|bulk/({names}))/n:[0-9]+/target:0($|/)",
                        f"--benchmark_out={path}", "--benchmark_out_format=json", "--benchmark_min_time=0.3"],
                       check=True, capture_output=True, text=True)
        with open(path) as f:
            out = json.load(f)
    rates = {}
    for b in out["benchmarks"]:
        if "values/s" in b and not b.get("error_occurred"):
            name, n = b["name"].split("/n:")
            rates[(name, int(n.split("/")[0]))] = (b["values/s"], b.get("label", "?"))
    return rates, out["context"].get("cpu_model", "unknown CPU")


def ml_pairs():
    """(from, to) for every conversion ml_dtypes has between float32 and a catalog format."""
    pairs = []
    for f in lplab.formats():
        if f == "float32":
            continue
        t = np.float16 if f == "float16" else getattr(ml_dtypes, f, None)
        if t is not None:
            pairs += [("float32", f, t), (f, "float32", t)]
    return pairs


def inputs(n, fmt):
    """N(0, 1) scaled to a quarter of the format's range."""
    top = min(lplab.finfo(fmt).max / 4, 1e30)
    return (np.random.default_rng(7).standard_normal(n) * top).astype(np.float32)


def main():
    rates, cpu = kernels_bench_rates()
    target = lplab.simd_target()
    print(f"CPU: {cpu}; SIMD target {target}; lplab {lplab.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"numpy {np.__version__}; one thread\n")

    print("1. Per call, float32 -> bfloat16")
    print(f"{'values':>7} {'C++ us':>8} {'_lplab us':>10} {'lplab us':>9} {'added by lplab.convert us':>26}")
    for n in (1, 1024):
        x = np.ones(n, np.float32)
        cxx = n / rates[("call/float->bf16", n)][0]
        y = np.empty(n, np.uint16)
        raw = per_call(lambda: _lplab.convert(x, "", y, "bfloat16", "nearest_even", "ieee", 0, False, 1))
        pkg = per_call(lambda: lplab.convert(x, "bfloat16"))
        print(f"{n:>7} {cxx * 1e6:>8.3f} {raw * 1e6:>10.3f} {pkg * 1e6:>9.3f} {(pkg - cxx) * 1e6:>26.3f}")

    print(f"\n2. {BIG} values: lplab.convert against the C++ kernel (kernels_bench, same target, its output "
          "buffer reused)")
    print(f"{'conversion':<28} {'C++ G/s':>8} {'into out= G/s':>14} {'ratio':>7} {'new result G/s':>15} {'ratio':>7}")
    for (src, dst), name in CXX.items():
        x = inputs(BIG, dst if src == "float32" else src)
        arg = x if src == "float32" else lplab.convert(x, src)
        buf = lplab.convert(arg, dst)
        r_out = BIG / best_seconds(lambda: lplab.convert(arg, dst, out=buf))
        r_new = BIG / best_seconds(lambda: lplab.convert(arg, dst))
        c = rates[(f"bulk/{name}", BIG)][0]
        print(f"{src + ' -> ' + dst:<28} {c / 1e9:>8.3f} {r_out / 1e9:>14.3f} {r_out / c:>6.2f}x {r_new / 1e9:>15.3f} "
              f"{r_new / c:>6.2f}x")

    print("\n3. Against ml_dtypes' astype")
    print(f"{'conversion':<34} {'values':>9} {'lplab G/s':>10} {'ml_dtypes G/s':>14} {'ratio':>7}")
    slower = []
    for src, dst, t in ml_pairs():
        fmt = dst if src == "float32" else src
        for n in (SMALL, BIG):
            x = inputs(n, fmt)
            if src == "float32":
                ours = lambda: lplab.convert(x, dst)
                theirs = lambda: x.astype(t)
            else:
                a = lplab.convert(x, src)
                m = a.to_ml_dtypes()
                ours = lambda: lplab.convert(a, "float32")
                theirs = lambda: m.astype(np.float32)
            with np.errstate(all="ignore"):
                ro = n / best_seconds(ours)
                rt = n / best_seconds(theirs)
            print(f"{src + ' -> ' + dst:<34} {n:>9} {ro / 1e9:>10.3f} {rt / 1e9:>14.3f} {ro / rt:>6.2f}x")
            if ro < rt:
                slower.append(f"{src} -> {dst} ({n})")
    print("lplab is faster than ml_dtypes on every conversion" if not slower
          else "lplab is slower on: " + ", ".join(slower))


if __name__ == "__main__":
    main()
