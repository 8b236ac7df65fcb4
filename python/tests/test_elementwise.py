"""Elementwise ops and reductions: against numpy/ml_dtypes references, on
strided and broadcast operands, and the lecture's bf16 sum."""
import numpy as np
import pytest

import lplab
from conftest import needs_ml_dtypes


@needs_ml_dtypes
def test_bf16_ops_round_once_from_fp32():
    import ml_dtypes
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 48)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 48)).astype(ml_dtypes.bfloat16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    def bf(v):
        return np.asarray(v, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    assert (lplab.add(a, b).numpy() == bf(a32 + b32)).all()
    assert (lplab.mul(a, b).numpy() == bf(a32 * b32)).all()
    assert (lplab.relu(a).numpy() == bf(np.maximum(a32, 0))).all()
    assert (lplab.scale(a, 0.3).numpy() == bf(np.float32(0.3) * a32)).all()
    assert (lplab.square(a).numpy() == bf(a32 * a32)).all()
    # axpy: one rounding of the exact alpha * a + b (an fma), then bf16
    exact = np.float32(1.5) * a32.astype(np.float64) + b32.astype(np.float64)
    assert (lplab.axpy(1.5, a, b).numpy() == bf(exact.astype(np.float32))).all()


@needs_ml_dtypes
def test_output_format_and_compute_policy():
    import ml_dtypes
    x = lplab.convert(np.linspace(1, 4, 512, dtype=np.float32), "bf16")
    x32 = x.numpy()
    def bf(v):
        return np.asarray(v, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    per_op = lplab.map(x, ["square", "sqrt"]).numpy()
    fused = lplab.map(x, ["square", "sqrt"], compute="fused").numpy()
    assert (fused == x32).all()  # sqrt(x^2) in fp32 is x
    assert (per_op == bf(np.sqrt(bf(x32 * x32)))).all()  # x^2 rounded to bf16 first
    k = np.float32(1.01)
    chain = [("scale", k), ("scale", 1 / k)]
    p2 = lplab.map(x, chain).numpy()
    f2 = lplab.map(x, chain, compute="fused").numpy()
    assert (p2 == bf(bf(k * x32) * np.float32(1 / k))).all()
    assert (f2 == bf((k * x32) * np.float32(1 / k))).all()
    assert (p2 != f2).any()  # rounding after every op shows
    y = lplab.relu(lplab.convert(np.array([-1.0, 300.0, 1000.0], np.float32), "bf16"), out_format="e4m3",
                   overflow="saturate")
    assert y.format == "float8_e4m3fn" and y.numpy().tolist() == [0.0, 288.0, 448.0]


def test_strided_and_broadcast_operands():
    rng = np.random.default_rng(1)
    x = lplab.convert(rng.standard_normal((70, 90)).astype(np.float32), "e5m2")
    t = x.T
    assert (lplab.relu(t).codes == lplab.relu(t.copy()).codes).all()
    row = lplab.convert(rng.standard_normal(90).astype(np.float32), "e5m2")
    got = lplab.add(x, row)
    want = lplab.add(x, lplab.Array(np.broadcast_to(row.codes, (70, 90)).copy(), "e5m2"))
    assert got.shape == (70, 90) and got == want
    col = np.ones((70, 1), np.float32)
    assert lplab.mul(x, col, out_format="float32").shape == (70, 90)
    with pytest.raises(ValueError, match="do not broadcast"):
        lplab.add(x, np.ones(89, np.float32))


def test_reductions():
    ones = lplab.convert(np.ones(10_000, np.float32), "bf16")
    # bf16 has 8 significant bits: 256 + 1 rounds back to 256 (swamping).
    assert lplab.sum(ones, accumulate="storage") == 256.0
    assert lplab.sum(ones) == 10_000.0
    assert lplab.mean(ones, accumulate="fp64") == 1.0
    assert lplab.amax(lplab.convert(np.array([-7.0, 3.0], np.float32), "e4m3")) == 7.0
    assert np.isnan(lplab.amax(np.array([1.0, np.nan], np.float32)))


def test_triu():
    x = lplab.convert(np.arange(1, 10, dtype=np.float32).reshape(3, 3), "fp16")
    assert lplab.triu(x, 1).numpy().tolist() == [[0, 2, 3], [0, 0, 6], [0, 0, 0]]


@pytest.mark.parametrize("bad, message", [
    (lambda: lplab.relu(np.ones(3)), "float64"),
    (lambda: lplab.map(np.ones(3, np.float32), ["tanh"]), "unknown unary op"),
    (lambda: lplab.map(np.ones(3, np.float32), ["relu"], compute="fast"), "unknown compute"),
    (lambda: lplab.sum(np.ones(3, np.float32), accumulate="fp8"), "unknown accumulation"),
    (lambda: lplab.triu(np.ones(3, np.float32)), "2 dimensions"),
    # 2^62 elements through stride-0 views: refused, never allocated short
    (lambda: lplab.add(np.broadcast_to(np.float32(1), (2 ** 31, 1)), np.broadcast_to(np.float32(1), (1, 2 ** 31))),
     "does not fit"),
])

def test_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_the_fp64_reference_is_reachable_from_every_unary_op():
    x = lplab.convert(np.linspace(-3, 3, 101, dtype=np.float32), "bf16")
    for f in (lplab.gelu_tanh, lplab.gelu_erf, lplab.relu, lplab.square, lplab.cast):
        ref = f(x, compute="fp64")
        assert ref.format == "bfloat16" and ref.shape == x.shape
