#!/usr/bin/env python3
"""docs/mma-speed.md: every matrix-unit preset against lplab's fp32 GEMM.

Runs benchmarks/mma_bench twice on this machine -- the best SIMD target at
256^3 and 1024^3, and LPLAB_SIMD_TARGET=AVX2 at 256^3, each preset's rate the
median of 3 runs (single runs strayed by up to 40% on a shared VM) -- and writes the table
of all presets (rate and ratio per run, each preset's model) with a summary by
algorithm, counting the presets at 0.1x or more. The ratios are mma_bench's:
each to the fp32 GEMM of the same size in the same run.

  python3 scripts/mma-speed-table.py [--bench build/release/benchmarks/mma_bench]
                                     [--out docs/mma-speed.md] [--min-time 0.15]

Bad arguments (an --out that is a directory, in no writable directory, or the
bench itself; a --bench that is not an executable file; a --min-time that is
not a number) get one line and exit 1 before any timing; a failed write
leaves the old table and exits 1.
"""
import argparse
import collections
import datetime
import os
import re
import subprocess
import sys


def run(bench, sizes, target, min_time):
    env = dict(os.environ)
    if target:
        env["LPLAB_SIMD_TARGET"] = target
    cmd = [bench, f"--sizes={sizes}", "--warmup=5", "--repeats=3", f"--benchmark_min_time={min_time}"]
    print("running:", (f"LPLAB_SIMD_TARGET={target} " if target else "") + " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return parse(out)


def parse(text):
    cpu = re.search(r"^CPU: (.*); SIMD target: (\S+);", text, re.M)
    if not cpu:
        sys.exit("mma-speed-table: no 'CPU:' line in mma_bench's output")
    base = {int(n): float(g) for n, g in re.findall(r"^lplab fp32 GEMM (\d+)\^3: ([\d.]+) GFLOP/s", text, re.M)}
    sizes = [int(n) for n in re.findall(r"(\d+)\^3 GF/s", text.split("\npreset", 1)[1].splitlines()[0])]
    rows = {}
    for line in text.split("\npreset", 1)[1].splitlines()[1:]:
        if not line.strip():
            break
        name, rest = line[:72].strip(), line[72:].split()
        values = [float(x) for x in rest[: 2 * len(sizes)]]
        rows[name] = (values, " ".join(rest[2 * len(sizes):]))
    if len(rows) < 300:
        sys.exit(f"mma-speed-table: {len(rows)} presets parsed, expected all")
    return {"cpu": cpu.group(1), "target": cpu.group(2), "base": base, "sizes": sizes, "rows": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="build/release/benchmarks/mma_bench")
    ap.add_argument("--out", default="docs/mma-speed.md")
    ap.add_argument("--min-time", default="0.15")
    a = ap.parse_args()
    # Refused before any timing (the runs take about 20 minutes): an output
    # that is a directory, lies in no writable directory, or is the bench.
    out_dir = os.path.dirname(os.path.abspath(a.out))
    if os.path.isdir(a.out) or not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
        sys.exit(f"mma-speed-table: --out {a.out}: not a file in a writable directory")
    if os.path.exists(a.out) and os.path.samefile(a.out, a.bench):
        sys.exit(f"mma-speed-table: --out {a.out} is the benchmark itself")
    if not (os.path.isfile(a.bench) and os.access(a.bench, os.X_OK)):
        sys.exit(f"mma-speed-table: --bench {a.bench}: not an executable file")
    try:
        float(a.min_time)
    except ValueError:
        sys.exit(f"mma-speed-table: --min-time {a.min_time}: not a number of seconds")
    best = run(a.bench, "256,1024", None, a.min_time)
    avx2 = run(a.bench, "256", "AVX2", a.min_time)
    t = best["target"]
    cols = [(f"{t} 256³", best, 0), (f"{t} 1024³", best, 1), ("AVX2 256³", avx2, 0)]
    lines = [
        "# Every matrix-unit preset against lplab's fp32 GEMM",
        f"`python3 scripts/mma-speed-table.py` ({datetime.date.today()}): `mma_bench --sizes=256,1024 --repeats=3` on {t} and",
        f"`LPLAB_SIMD_TARGET=AVX2 mma_bench --sizes=256 --repeats=3`, one thread, on `{best['cpu']}`; each rate the median of 3 runs.",
        "Each preset is a matmul (`Accumulator::instruction`) of N(0,1) operands rounded to the instruction's",
        "operand types (block-scaled: scales 2^-8 .. 2^8, or E4M3 values); the ratio is to lplab's fp32 GEMM",
        "(`Accumulator::fp32`, 64-byte-aligned operands) of the same size in the same run, the faster of its",
        f"medians before and after the presets: {t} 256³ {best['base'][256]:.1f} GFLOP/s, {t} 1024³ "
        f"{best['base'][1024]:.1f} GFLOP/s, AVX2 256³ {avx2['base'][256]:.1f} GFLOP/s.",
        "Issue 44 asks for 0.1× at 256³ and 1024³; docs/kernels.md (\"Matrix units in SIMD\") says which kernel",
        "runs each algorithm and what bounds it.",
        "",
        "## By algorithm",
        "",
        "| algorithm | presets | " + " | ".join(f"{c} ratio (≥ 0.1×)" for c, _, _ in cols) + " |",
        "|---|---|" + "---|" * len(cols),
    ]
    groups = collections.defaultdict(list)
    for name, (_, model) in best["rows"].items():
        alg = model.split(",")[0]
        m = re.search(r"L = (\d+), F = (\d+)", model)
        out = "fp16" if "fp16" in model else "E8M13" if "E8M13" in model else "fp32"
        key = f"{alg}, L = {m.group(1)}, F = {m.group(2)}, {out} D" if alg in ("truncated", "scaled") and m else alg
        groups[key].append(name)
    totals = [0] * len(cols)
    for key in sorted(groups):
        names = groups[key]
        cells = []
        for i, (_, run_, col) in enumerate(cols):
            r = [run_["rows"][n][0][2 * col + 1] for n in names]
            ok = sum(x >= 0.1 for x in r)
            totals[i] += ok
            cells.append(f"{min(r):.3f}–{max(r):.3f} ({ok})")
        lines.append(f"| {key} | {len(names)} | " + " | ".join(cells) + " |")
    lines.append(f"| **all** | {len(best['rows'])} | " + " | ".join(f"**{n}** at ≥ 0.1×" for n in totals) + " |")
    lines += ["", "## Every preset", "",
              "| preset | " + " | ".join(f"{c} GFLOP/s | ratio" for c, _, _ in cols) + " | model |",
              "|---|" + "---|---|" * len(cols) + "---|"]
    for name, (_, model) in best["rows"].items():
        cells = []
        for _, run_, col in cols:
            v = run_["rows"][name][0]
            cells.append(f"{v[2 * col]:.2f} | {v[2 * col + 1]:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {model} |")
    text = "\n".join(lines) + "\n"
    tmp = a.out + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.exit(f"mma-speed-table: --out {a.out}: {e.strerror}")
    print(f"wrote {a.out}: {len(best['rows'])} presets; at >= 0.1x: " +
          ", ".join(f"{c} {n}" for (c, _, _), n in zip(cols, totals)), file=sys.stderr)


if __name__ == "__main__":
    main()
