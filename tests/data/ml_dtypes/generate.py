"""Writes <format>.npy (np.save of an ml_dtypes array: raw void data, as
ml_dtypes leaves it) and <format>.f64.npy (ml_dtypes' own astype(float64) of
it) for the formats named on the command line: 196 N(0, 4^2) draws and
0, -0, 1e-9, 1e9, +-inf, NaN, 448, 449, 2^-6 and four more values around the
format's range, converted by ml_dtypes' astype, shape (15, 14).

    python3 tests/data/ml_dtypes/generate.py float8_e3m4 float8_e4m3 float8_e4m3b11fnuz
    python3 tests/data/ml_dtypes/generate.py int4 uint4 int2 uint2 int1 uint1
"""
import sys

import ml_dtypes
import numpy as np


def main() -> None:
    for name in sys.argv[1:]:
        t = getattr(ml_dtypes, name)
        rng = np.random.default_rng(sum(map(ord, name)))
        if np.dtype(t).kind == "V" and name.startswith(("int", "uint")):
            # The integers (astype truncates and wraps): the range's ends, past them, NaN, infinities.
            info = ml_dtypes.iinfo(t)
            special = [0.0, -0.0, 1e-9, 1e9, np.inf, -np.inf, np.nan, 7.9, -7.9, 8.7, 17.0, -9.0,
                       float(info.max), float(info.min)]
        else:
            info = ml_dtypes.finfo(t)
            special = [0.0, -0.0, 1e-9, 1e9, np.inf, -np.inf, np.nan, 448.0, 449.0, 2.0**-6,
                       float(info.max), -float(info.max), float(info.smallest_subnormal), float(info.tiny)]
        x = np.concatenate([rng.normal(0.0, 4.0, 210 - len(special)), special]).astype(np.float32)
        a = x.reshape(15, 14).astype(t)
        np.save(f"{name}.npy", a)
        np.save(f"{name}.f64.npy", a.astype(np.float64))


if __name__ == "__main__":
    main()
