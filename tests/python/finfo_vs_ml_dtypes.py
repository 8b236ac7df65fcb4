"""lplab finfo against the live libraries: ml_dtypes.finfo for the formats
ml_dtypes has, numpy.finfo for float16 and float32. Exit 77 (skipped) when
ml_dtypes is not importable.

    python3 tests/python/finfo_vs_ml_dtypes.py build/release/tools/lplab
"""
import json
import subprocess
import sys

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)

FIELDS_FLOAT = ["eps", "epsneg", "max", "min", "tiny", "smallest_normal", "smallest_subnormal"]
FIELDS_INT = ["bits", "machep", "negep", "nmant", "nexp", "iexp", "maxexp", "minexp", "precision"]


# Catalog formats ml_dtypes does not define (every other one must exist there).
NOT_IN_ML_DTYPES = {"float8_e5m3fnu": "NVIDIA's UE5M3 scale (PTX ISA 13.4 preview), which ml_dtypes 0.6.0 lacks"}

def main() -> int:
    tool = sys.argv[1]
    out = subprocess.run([tool, "finfo", "--all", "--output", "json"], check=True,
                         capture_output=True, text=True).stdout
    ours = {f["name"]: f for f in json.loads(out)}
    checked = 0
    failures = []
    for name, f in ours.items():
        if f["encoding"] == "integer":
            # numpy.iinfo / ml_dtypes.iinfo: the range and the width.
            theirs = np.iinfo(name) if name in ("int8", "uint8") else ml_dtypes.iinfo(getattr(ml_dtypes, name))
            for field in ("min", "max", "bits"):
                if getattr(theirs, field) != f[field]:
                    failures.append(f"{name}.{field}: lplab {f[field]!r}, theirs {getattr(theirs, field)!r}")
                checked += 1
            continue
        if name in ("float16", "float32"):
            theirs = np.finfo(getattr(np, name))
        elif hasattr(ml_dtypes, name):
            theirs = ml_dtypes.finfo(getattr(ml_dtypes, name))
        elif name in NOT_IN_ML_DTYPES:
            print(f"not compared: {name}, {NOT_IN_ML_DTYPES[name]}")
            continue
        else:
            failures.append(f"{name}: ml_dtypes {ml_dtypes.__version__} has no such type")
            continue
        for field in FIELDS_FLOAT:
            if float(getattr(theirs, field)) != f[field]:
                failures.append(f"{name}.{field}: lplab {f[field]!r}, theirs {float(getattr(theirs, field))!r}")
            checked += 1
        if float(theirs.resolution) != f["resolution_numpy"]:
            failures.append(f"{name}.resolution: lplab {f['resolution_numpy']!r}, theirs {float(theirs.resolution)!r}")
        checked += 1
        for field in FIELDS_INT:
            if int(getattr(theirs, field)) != f[field]:
                failures.append(f"{name}.{field}: lplab {f[field]!r}, theirs {getattr(theirs, field)!r}")
            checked += 1
    for line in failures:
        print("MISMATCH", line)
    print(f"{checked} fields compared with ml_dtypes {ml_dtypes.__version__} / numpy {np.__version__}: "
          f"{len(failures)} mismatches")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
