"""docs/ml-dtypes.md, live: every documented difference between lplab and
ml_dtypes, run through both sides. ml_dtypes must still give what the page says
(else the page is stale: ml_dtypes changed), and the lplab tool must give
lplab's column. Exit 77 (skipped) when ml_dtypes is not importable.

    python3 tests/python/ml_dtypes_differences.py build/release/tools/lplab
"""
import json
import math
import subprocess
import sys
import warnings

try:
    import ml_dtypes as m
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)

warnings.simplefilter("ignore")  # NumPy warns on NaN casts; the values are the point
np.seterr(all="ignore")


def below(v: float) -> float:
    return math.nextafter(v, 0.0)


def code(a) -> int:
    return int(np.asarray(a).reshape(-1)[:1].view(np.uint8 if a.dtype.itemsize == 1 else np.uint16)[0])


# (what, input text for the tool, NumPy input, format, ml_dtypes code, lplab code)
CONVERSIONS = [
    ("1. 1.25*2^-127 into E8M0", (1.25 * 2.0**-127).hex(), np.float32(1.25 * 2.0**-127),
     "float8_e8m0fnu", 0x01, 0x00),
    ("3. double below 1+3*2^-8 into bf16", below(1 + 3 * 2.0**-8).hex(), np.float64(below(1 + 3 * 2.0**-8)),
     "bfloat16", 0x3F82, 0x3F81),
    ("3. double below 1.1875 into E4M3", below(1.1875).hex(), np.float64(below(1.1875)),
     "float8_e4m3fn", 0x3A, 0x39),
    ("3. double below bf16's overflow threshold", below(2.0**128 - 2.0**119).hex(),
     np.float64(below(2.0**128 - 2.0**119)), "bfloat16", 0x7F80, 0x7F7F),
    ("3. double below E5M2's overflow threshold", below(61440.0).hex(), np.float64(below(61440.0)),
     "float8_e5m2", 0x7C, 0x7B),
    ("3. double below E4M3FNUZ's overflow threshold", below(248.0).hex(), np.float64(below(248.0)),
     "float8_e4m3fnuz", 0x80, 0x7F),
    ("3. double below E5M2FNUZ's overflow threshold", below(61440.0).hex(), np.float64(below(61440.0)),
     "float8_e5m2fnuz", 0x80, 0x7F),
    ("3. double below E8M0's overflow threshold", below(1.5 * 2.0**127).hex(),
     np.float64(below(1.5 * 2.0**127)), "float8_e8m0fnu", 0xFF, 0xFE),
    ("3. double below 1.5 into E8M0", below(1.5).hex(), np.float64(below(1.5)), "float8_e8m0fnu", 0x80, 0x7F),
    ("5. +NaN into E2M3", "nan", np.float32(np.nan), "float6_e2m3fn", 0x20, 0x1F),
    ("5. -NaN into E2M3", "-nan", -np.float32(np.nan), "float6_e2m3fn", 0x00, 0x1F),
    ("5. +NaN into E3M2", "nan", np.float32(np.nan), "float6_e3m2fn", 0x20, 0x1F),
    ("5. +NaN into E2M1", "nan", np.float32(np.nan), "float4_e2m1fn", 0x08, 0x7),
    ("5. -NaN into E2M1", "-nan", -np.float32(np.nan), "float4_e2m1fn", 0x00, 0x7),
]


def lplab_code(tool: str, text: str, fmt: str) -> int:
    out = subprocess.run([tool, "inspect", text, "--to", fmt, "--output", "json"], check=True,
                         capture_output=True, text=True).stdout
    return int(json.loads(out)["results"][0]["code"], 16)


def main() -> int:
    tool = sys.argv[1]
    failures = []
    for what, text, x, fmt, theirs_doc, ours_doc in CONVERSIONS:
        theirs = code(np.array([x]).astype(getattr(m, fmt)))
        ours = lplab_code(tool, text, fmt)
        if theirs != theirs_doc:
            failures.append(f"{what}: ml_dtypes now gives {theirs:#x}, the page says {theirs_doc:#x}")
        if ours != ours_doc:
            failures.append(f"{what}: lplab gives {ours:#x}, the page says {ours_doc:#x}")

    # Arithmetic: ml_dtypes' side (lplab's is pinned by ml_dtypes_differences_test).
    e8 = m.float8_e8m0fnu
    tiny, huge = np.array([2.0**-100], np.float32).astype(e8), np.array([2.0**100], np.float32).astype(e8)
    for what, r in [("2. E8M0 2^-100 * 2^-100", tiny * tiny), ("2. E8M0 2^-100 / 2^100", tiny / huge)]:
        if code(r) != 0xFF:
            failures.append(f"{what}: ml_dtypes now gives {code(r):#x}, the page says 0xff (NaN)")
    for fmt in ("float4_e2m1fn", "float6_e2m3fn"):
        z = np.zeros(1, getattr(m, fmt))
        if code(z / z) != 0:
            failures.append(f"6. 0/0 in {fmt}: ml_dtypes now gives {code(z / z):#x}, the page says 0")

    # 4. NaN payloads (ml_dtypes' side; lplab's is pinned by the C++ test).
    snan = np.array([0x7FA00000], np.uint32).view(np.float32)
    qnan = np.array([0x7FC12345], np.uint32).view(np.float32)
    for what, got, want in [("4. sNaN into fp16 (NumPy's)", code(snan.astype(np.float16)), 0x7D00),
                            ("4. sNaN into bf16", code(snan.astype(m.bfloat16)), 0x7FC0),
                            ("4. qNaN payload into bf16", code(qnan.astype(m.bfloat16)), 0x7FC0),
                            ("4. sNaN into E5M2", code(snan.astype(m.float8_e5m2)), 0x7E)]:
        if got != want:
            failures.append(f"{what}: ml_dtypes now gives {got:#x}, the page says {want:#x}")

    for line in failures:
        print("MISMATCH", line)
    print(f"{len(CONVERSIONS)} conversions through both sides, 8 ml_dtypes/NumPy-only checks; "
          f"ml_dtypes {m.__version__}: {len(failures)} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
