"""lplab's E8M0 scale rules against torchao 0.18.0's to_mx (FLOOR, RCEIL,
CEIL, EVEN = lplab's floor, rceil, ceil_amax, even), from the goldens
scripts/torchao-goldens.py wrote in a development environment
(tests/data/torchao/goldens.txt): 25 tensors, five element formats, four
modes, 32-element blocks.

Every block must agree, scale code and element codes, except where
docs/recipes.md lists a departure, and each departing block is checked to
be that departure, not merely allowed:
- a NaN or an infinity in the block: lplab's scale is NaN (0xFF) and its
  elements +0; torchao's scale is 0xFF for a NaN, and for an infinity 0xFE
  under RCEIL (TE's byte) or 2^(128 - emax_elem) under the others (its
  exponent field read as 128);
- scale byte 0 on both sides: torchao multiplies by 2^126 (its F32_MIN_NORMAL
  clamp; FLOOR, CEIL, EVEN) or by 1 (RCEIL, TE's exp2f_rcp) where the
  scale's reciprocal is 2^127; its elements are then lplab's conversion of
  x times that multiplier;
- RCEIL just above a power of two: torchao's eager path takes
  ceil(float32 log2(amax / max_elem)), and a log2 within half an ulp of the
  integer k rounds to k, one code below the exact ceiling lplab (and the
  cvt.rp.satfinite.ue8m0x2 instruction torchao runs when compiled) gives.
"""
import math
import pathlib

import numpy as np
import pytest

import lplab

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "torchao" / "goldens.txt"
RULES = {"FLOOR": "floor", "RCEIL": "rceil", "CEIL": "ceil_amax", "EVEN": "even"}
MAX_ELEM = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float6_e2m3fn": 7.5, "float6_e3m2fn": 28.0,
            "float4_e2m1fn": 6.0}
EMAX_ELEM = {"float8_e4m3fn": 8, "float8_e5m2": 15, "float6_e2m3fn": 2, "float6_e3m2fn": 4, "float4_e2m1fn": 2}
BLOCK = 32


def read_goldens():
    lines = GOLDENS.read_text().splitlines()
    assert lines[0].startswith("# torchao 0.18.0 ")
    cases, i = [], 1
    while i < len(lines):
        _, name, elem, rows, cols = lines[i].split()
        x = np.array([int(v, 16) for v in lines[i + 1].split()[1:]], np.uint32).view(np.float32)
        x = x.reshape(int(rows), int(cols))
        i += 2
        while i < len(lines) and lines[i].startswith("mode "):
            mode = lines[i].split()[1]
            s = np.array([int(v, 16) for v in lines[i + 1].split()[1:]], np.uint8)
            qt = lines[i + 2][2:]
            q = np.array([int(qt[k:k + 2], 16) for k in range(0, len(qt), 2)], np.uint8)
            cases.append((name, elem, mode, x, s, q))
            i += 3
    return cases


CASES = read_goldens()


def codes(a):
    return np.asarray(a.codes).reshape(-1).astype(np.uint8)


def converted(x, elem, multiplier):
    """lplab's elements of x * multiplier (exact in float32 here), to
    nearest-even, saturating: what the reference's scaled cast gives."""
    y = (x.astype(np.float64) * multiplier).astype(np.float32)
    return codes(lplab.convert(y, elem, overflow="saturate"))


def torchao_multiplier(scale_code, mode):
    """What torchao multiplies a block by for its scale byte: the byte's
    reciprocal, except byte 0 (above)."""
    if scale_code == 0:
        return 1.0 if mode == "RCEIL" else 2.0 ** 126
    return 2.0 ** (127 - int(scale_code))


def exact_rceil(amax, elem):
    """ceil(log2 q), q = amax * float32(1 / max_elem) in float32, exactly."""
    q = float(np.float32(amax) * np.float32(1.0 / MAX_ELEM[elem]))
    m, e = math.frexp(q)
    return e - 1 if m == 0.5 else e


def test_every_case_was_read():
    assert len(CASES) == 5 * 5 * 4
    assert {(c[1], c[2]) for c in CASES} == {(e, m) for e in MAX_ELEM for m in RULES}


@pytest.mark.parametrize("mode", list(RULES))
def test_lplab_rules_equal_torchao_to_mx(mode):
    counts = {"equal": 0, "non-finite": 0, "byte 0": 0, "rceil log2": 0}
    for name, elem, m, x, s_ref, q_ref in CASES:
        if m != mode:
            continue
        quant = lplab.quantize(x, None, elem=elem, scale="float8_e8m0fnu", block_size=BLOCK, rule=RULES[mode],
                               tensor_scale=False)
        s_lp, q_lp = codes(quant.scales), codes(quant.elems)
        flat = x.reshape(-1)
        for b in range(s_ref.size):
            blk = slice(b * BLOCK, (b + 1) * BLOCK)
            xb = flat[blk]
            where = f"{name} {elem} {mode} block {b}"
            if s_lp[b] == s_ref[b] and np.array_equal(q_lp[blk], q_ref[blk]):
                counts["equal"] += 1
                continue
            if not np.all(np.isfinite(xb)):
                assert s_lp[b] == 0xFF and not q_lp[blk].any(), where
                if np.isnan(xb).any():
                    want = 0xFF
                else:
                    want = 0xFE if mode == "RCEIL" else min(0xFF, 127 + 128 - EMAX_ELEM[elem])
                assert s_ref[b] == want, f"{where}: torchao's scale {s_ref[b]:#x}, docs/recipes.md says {want:#x}"
                counts["non-finite"] += 1
            elif s_lp[b] == 0 and s_ref[b] == 0:
                assert np.array_equal(q_lp[blk], converted(xb, elem, 2.0 ** 127)), where
                assert np.array_equal(q_ref[blk], converted(xb, elem, torchao_multiplier(0, mode))), where
                counts["byte 0"] += 1
            else:
                assert mode == "RCEIL", f"{where}: lplab {s_lp[b]:#x}, torchao {s_ref[b]:#x}"
                amax = float(np.max(np.abs(xb)))
                k = exact_rceil(amax, elem)
                assert int(s_lp[b]) == k + 127, where
                assert int(s_ref[b]) == k + 126, f"{where}: not the log2 miss by one"
                d = np.float32(amax) / np.float32(MAX_ELEM[elem])
                assert np.log2(np.float32(d)) == np.float32(k - 1), f"{where}: float32 log2 not on the integer"
                assert np.array_equal(q_ref[blk], converted(xb, elem, torchao_multiplier(s_ref[b], mode))), where
                counts["rceil log2"] += 1
    # The departures were met, where the cases put them; most blocks agree.
    assert counts["non-finite"] >= 5 and counts["byte 0"] >= 10, counts
    assert (counts["rceil log2"] > 0) == (mode == "RCEIL"), counts
    assert counts["equal"] >= 500, counts
