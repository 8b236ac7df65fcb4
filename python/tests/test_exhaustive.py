"""Every one of the 2^32 float32 inputs, rounded to nearest-even into a 16-bit
and an 8-bit format by lplab.convert and by ml_dtypes' astype: the same code
for every input that is not NaN, and NaN for every NaN (payloads may differ:
docs/ml-dtypes.md, 4). Run in scripts/test.sh's exhaustive stage
(pytest -m exhaustive)."""
import numpy as np
import pytest

import lplab
from conftest import codes_view, needs_ml_dtypes

CHUNK = 1 << 24


@pytest.mark.exhaustive
@needs_ml_dtypes
@pytest.mark.parametrize("fmt", ["bfloat16", "float8_e4m3fn"])
def test_every_float32(fmt):
    import ml_dtypes
    t = getattr(ml_dtypes, fmt)
    base = np.arange(CHUNK, dtype=np.uint32)
    for hi in range(1 << 32 >> 24):
        bits = base | np.uint32(hi << 24)
        x = bits.view(np.float32)
        ours = lplab.encode(x, fmt)
        with np.errstate(all="ignore"):
            theirs = codes_view(x.astype(t))
        nan = np.isnan(x)
        differ = (ours != theirs) & ~nan
        assert not differ.any(), f"{fmt}: first differing input 0x{bits[differ][0]:08x}"
        # Every NaN input is a NaN code, of the input's sign.
        ours_nan = lplab.Array(ours[nan], fmt).numpy()
        assert np.isnan(ours_nan).all()
        assert ((ours[nan] >> (15 if fmt == "bfloat16" else 7)) == (bits[nan] >> 31)).all()
