"""Every catalog format against the live ml_dtypes (numpy for float16 and
float32): every code's value, and float32 -> format under nearest-even on a
dense sample -- every float32 whose low 13 bits are zero (2^19 inputs across
the whole range, specials included) plus, for every pair of neighbouring
values of the format, the midpoint and the float32s either side of it, and
the same either side of every value. The codes come from the bulk kernels on
this machine's SIMD target (convert_codes). Only the documented differences
(docs/ml-dtypes.md) are set aside: 1. E8M0 from inputs below 2^-127 * 1.5,
which ml_dtypes rounds as if E8M0 had subnormals; 5. NaN into formats without
NaN. Exit 77 (skipped) when ml_dtypes is not importable.

    python3 tests/python/ml_dtypes_live.py build/release/tools/lplab build/release/tests/convert_codes
"""
import json
import subprocess
import sys
import warnings

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)

warnings.simplefilter("ignore")
np.seterr(all="ignore")


# Catalog formats ml_dtypes does not define (every other one must exist there).
NOT_IN_ML_DTYPES = {"float8_e5m3fnu": "NVIDIA's UE5M3 scale (PTX ISA 13.4 preview), which ml_dtypes 0.6.0 lacks"}

def their_type(name: str):
    return getattr(np, name) if name in ("float16", "float32", "int8", "uint8") else getattr(ml_dtypes, name, None)


def code_view(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def same(ours, theirs):
    """Codes equal, or both NaN (NaN is compared as a class)."""
    return (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))


def main() -> int:
    tool, convert_codes = sys.argv[1], sys.argv[2]
    formats = json.loads(subprocess.run([tool, "formats", "--output", "json"], check=True,
                                        capture_output=True, text=True).stdout)
    failures, compared = [], 0
    for f in formats:
        name, bits = f["name"], f["bits"]
        t = their_type(name)
        if t is None and name in NOT_IN_ML_DTYPES:
            print(f"not compared: {name}, {NOT_IN_ML_DTYPES[name]}")
            continue
        if t is None:
            failures.append(f"{name}: ml_dtypes {ml_dtypes.__version__} has no such type")
            continue
        if f["encoding"] == "integer":
            # Every code's value here; the conversions (ml_dtypes' astype is
            # truncation with wrap-around, not nearest-even) in
            # python/tests/test_integers.py.
            codes = np.arange(1 << bits, dtype=np.uint8)
            rows = json.loads(subprocess.run([tool, "values", name, "--output", "json"], check=True,
                                             capture_output=True, text=True).stdout)["values"]
            ours = np.array([float(r["value"]) for r in rows])
            theirs = codes.view(t).astype(np.float64)
            compared += len(codes)
            for i in np.flatnonzero(ours != theirs)[:5]:
                failures.append(f"{name} code {codes[i]:#x}: lplab {ours[i]!r}, theirs {theirs[i]!r}")
            continue
        info = ml_dtypes.finfo(t) if name not in ("float16", "float32") else np.finfo(t)
        has_nan = f["encoding"] != "none"  # OCP MX FP6/FP4: no NaN (none of float6_*, float4_*)
        size = np.dtype(t).itemsize

        # Every code's value (formats of up to 16 bits; lplab values).
        if bits <= 16:
            rows = json.loads(subprocess.run([tool, "values", name, "--output", "json"], check=True,
                                             capture_output=True, text=True).stdout)["values"]
            codes = np.array([int(r["code"], 16) for r in rows], dtype=np.uint16 if size == 2 else np.uint8)
            ours = np.array([float(r["value"]) for r in rows])
            theirs = codes.view(t).astype(np.float64)
            bad = ~same(ours, theirs)
            compared += len(codes)
            for i in np.flatnonzero(bad)[:5]:
                failures.append(f"{name} code {codes[i]:#x}: lplab {ours[i]!r}, ml_dtypes {theirs[i]!r}")

        # float32 -> format, nearest-even.
        grid = (np.arange(1 << 19, dtype=np.uint64) << np.uint64(13)).astype(np.uint32).view(np.float32)
        if bits <= 16:
            values = np.unique(theirs[np.isfinite(theirs)]).astype(np.float32)
            mids = ((values[:-1].astype(np.float64) + values[1:]) / 2).astype(np.float32)
            near = np.concatenate([values, mids])
            near = np.concatenate([near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, -np.float32(np.inf)),
                                   [np.float32(info.max) * 2, -np.float32(info.max) * 2]]).astype(np.float32)
            x = np.concatenate([grid, near])
        else:
            x = grid
        if not has_nan:
            x = x[~np.isnan(x)]                                    # difference 5
        if name == "float8_e8m0fnu":
            x = x[~(np.abs(x) < np.float32(1.5 * 2.0**-127))]      # difference 1
        out = subprocess.run([convert_codes, name], input=x.tobytes(), check=True, capture_output=True).stdout
        ours = np.frombuffer(out, dtype=code_view(np.zeros(1, t)).dtype)
        theirs = code_view(x.astype(t))
        bad = ours != theirs
        if has_nan:  # NaN compared as a class
            bad &= ~(np.isnan(ours.view(t).astype(np.float64)) & np.isnan(theirs.view(t).astype(np.float64)))
        compared += len(x)
        if bad.any():
            failures.append(f"{name}: {int(bad.sum())} of {len(x)} float32 inputs convert differently")
            for i in np.flatnonzero(bad)[:5]:
                failures.append(f"  {float(x[i])!r} ({float(x[i]).hex()}): lplab {int(ours[i]):#x}, ml_dtypes {int(theirs[i]):#x}")
    for line in failures:
        print("MISMATCH", line)
    print(f"{len(formats)} formats, {compared} codes and conversions compared with ml_dtypes "
          f"{ml_dtypes.__version__} / numpy {np.__version__}: {len(failures)} mismatches")
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
