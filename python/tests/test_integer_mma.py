"""Integer matrix units (kernels/integer_mma.h) against Python's exact
integers: every preset on random operands of its types and on operands built
for the wrap and saturation edges (C at and near INT32_MIN/MAX, products of
both signs, chains that cross a bound and come back). The oracle is the
ISA's sentence, written here apart from lplab's code: the exact sum of one
instruction's k products and C, wrapped mod 2^32 or clamped to int32
(.satfinite), D of one instruction the C of the next."""
import zlib

import numpy as np
import pytest

import lplab

RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15)}
PRESETS = lplab.integer_mma_instructions()


def oracle(a, b, c, k_inst, saturate):
    m, k = a.shape
    n = b.shape[1]
    d = np.zeros((m, n), np.int64)
    for r in range(m):
        for j in range(n):
            acc = int(c[r, j])
            for first in range(0, max(k, 1), k_inst):
                acc += sum(int(a[r, t]) * int(b[t, j]) for t in range(first, min(first + k_inst, k)))
                if saturate:
                    acc = min(max(acc, -2**31), 2**31 - 1)
                else:
                    acc = (acc + 2**31) % 2**32 - 2**31
            d[r, j] = acc
    return d


def operands(name, rng, k):
    arch, isa, m, n, k_inst, blocks, fa, fb, sat = PRESETS[name]
    lo_a, hi_a = RANGES[fa]
    lo_b, hi_b = RANGES[fb]
    a = rng.integers(lo_a, hi_a + 1, (3, k))
    b = rng.integers(lo_b, hi_b + 1, (k, 4))
    a[0, :] = hi_a if hi_a > -lo_a else lo_a   # the largest products
    b[:, 0] = hi_b if hi_b > -lo_b else lo_b
    b[:k // 2, 1], b[k // 2:, 1] = hi_b, lo_b  # a run that rises then falls
    c = np.array([[2**31 - 1, -2**31, 2**31 - 5000, 0]] * 3, np.int64)
    c[1] = [-2**31 + 1, 2**31 - 1, 17, -2**31 + 3000]
    return a, b, c


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_against_exact_integers(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    k_inst, sat = PRESETS[name][4], PRESETS[name][8]
    for k in (k_inst, 3 * k_inst + 1):  # whole instructions, and a zero-padded tail
        a, b, c = operands(name, rng, k)
        d = lplab.integer_matmul(a, b, name, c=c)
        np.testing.assert_array_equal(d, oracle(a, b, c, k_inst, sat), err_msg=f"{name} k = {k}")


def test_out_of_range_and_unknown():
    with pytest.raises(ValueError, match="not a int4 value"):
        lplab.integer_matmul(np.full((1, 4), 8), np.ones((4, 1), int), "ampere.mma.m16n8k64.s32.s4.s4.s32")
    with pytest.raises(ValueError, match="unknown integer matrix-unit preset"):
        lplab.integer_matmul(np.ones((1, 4), int), np.ones((4, 1), int), "volta.mma.m8n8k16.s32.s8.s8.s32")
    with pytest.raises(ValueError, match="not integers"):
        lplab.integer_matmul(np.full((1, 4), 0.5), np.ones((4, 1), int), "nvidia.dp4a.s8.s8")
