"""lplab.matmul's accumulators on cases a wrong model gets wrong."""
import numpy as np
import pytest

import lplab


def test_fp64_is_exact_and_fp16_swamps():
    a = lplab.convert(np.ones((1, 4096), np.float32), "fp16")
    b = lplab.convert(np.ones((4096, 1), np.float32), "fp16")
    assert lplab.matmul(a, b, accumulator="fp64")[0, 0] == 4096.0
    assert lplab.matmul(a, b, accumulator="fp32")[0, 0] == 4096.0
    # fp16 has 11 significant bits: 2048 + 1 rounds back to 2048.
    assert lplab.matmul(a, b, accumulator="fp16")[0, 0] == 2048.0


def test_hopper_fp8_truncates_small_products():
    # Products 1 and 2^-14: the block's largest exponent is 0 and it keeps
    # 13 fraction bits (MMA-Sim 2.1.1's Hopper FP8 model), so 2^-14 is cut.
    a = lplab.convert(np.array([[1.0, 2.0 ** -7]], np.float32), "e4m3")
    b = lplab.convert(np.array([[1.0], [2.0 ** -7]], np.float32), "e4m3")
    assert lplab.matmul(a, b, accumulator="fp64")[0, 0] == 1.0 + 2.0 ** -14
    assert lplab.matmul(a, b, accumulator="hopper_wgmma_fp8")[0, 0] == 1.0
    assert lplab.matmul(a, b, accumulator="tensor_core", params={"fraction_bits": 14})[0, 0] == 1.0 + 2.0 ** -14


def test_against_numpy_and_any_layout():
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, (33, 70)).astype(np.float32)
    b = rng.integers(-8, 8, (70, 21)).astype(np.float32)
    want = a.astype(np.float64) @ b
    ea, eb = lplab.convert(a, "e4m3"), lplab.convert(b, "e4m3")
    for acc in ["fp64", "fp32", "hopper_wgmma_fp8", "deepseek_v3_fp8"]:
        assert (lplab.matmul(ea, eb, accumulator=acc) == want).all(), acc
    a_t = lplab.convert(a.T.copy(), "e4m3").T  # a strided (transposed) view
    assert (lplab.matmul(a_t, eb, accumulator="hopper_wgmma_fp8") == want).all()
    c = lplab.matmul(ea, eb, accumulator="fp64", out_format="bf16", scale_a=0.5)
    assert c.format == "bfloat16"
    assert (c.numpy() == lplab.convert(want * 0.5, "bf16").numpy()).all()


def test_instruction_presets():
    names = [n for n, _, _ in lplab.accumulators()]
    assert "hopper_wgmma_fp8" in names and any(n.startswith("hopper.wgmma") for n in names)
    inst = next(n for n in names if n.startswith("hopper.wgmma") and n.endswith("e4m3.e4m3"))
    a = lplab.convert(np.ones((2, 64), np.float32), "e4m3")
    b = lplab.convert(np.ones((64, 3), np.float32), "e4m3")
    assert (lplab.matmul(a, b, accumulator=inst) == 64.0).all()


@pytest.mark.parametrize("bad, message", [
    (lambda: lplab.matmul(np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)), "inner dimensions"),
    (lambda: lplab.matmul(np.ones(3, np.float32), np.ones((3, 2), np.float32)), "matrix"),
    (lambda: lplab.matmul(np.ones((2, 2)), np.ones((2, 2))), "float64"),
    (lambda: lplab.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), accumulator="fp17"),
     "unknown 'fp17'"),
    (lambda: lplab.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), params={"blok": 3}),
     "unknown accumulator parameter"),
])
def test_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_block_scaled_operands():
    rng = np.random.default_rng(4)
    a = rng.integers(-6, 7, (16, 64)).astype(np.float32)
    b = rng.integers(-6, 7, (64, 8)).astype(np.float32)
    qa = lplab.quantize(a, "mxfp8_e4m3")
    qb = lplab.quantize(b.T.copy(), "mxfp8_e4m3")
    exact = lplab.dequantize(qa).astype(np.float64) @ lplab.dequantize(qb).astype(np.float64).T
    assert (exact == a.astype(np.float64) @ b).all()  # small integers: MX-exact
    for acc in ["fp64", "fp32", "tensor_core"]:
        assert (lplab.matmul_blocks(qa, qb, accumulator=acc) == exact).all(), acc
    # a block-scaled instruction applies the E8M0 scales inside its dot products
    names = [n for n, _, _ in lplab.accumulators() if "block_scale" in n or ".block32." in n]
    inst = next(n for n in names if "e4m3.e4m3" in n and "block32" in n)
    assert (lplab.matmul_blocks(qa, qb, accumulator=inst) == exact).all()
    # packed FP4 and NVFP4's tensor scales
    pa = lplab.quantize(a, "nvfp4", packed=True)
    pb = lplab.quantize(b.T.copy(), "nvfp4", packed=True)
    ref = lplab.dequantize(pa).astype(np.float64) @ lplab.dequantize(pb).astype(np.float64).T
    assert np.allclose(lplab.matmul_blocks(pa, pb, accumulator="fp64"), ref, rtol=1e-6)
    with pytest.raises(ValueError, match="k differs"):
        lplab.matmul_blocks(qa, lplab.quantize(b[:32].T.copy(), "mxfp8_e4m3"))
    with pytest.raises(ValueError, match="multiple|block"):
        lplab.matmul_blocks(lplab.quantize(a[:, :40].copy(), "mxfp8_e4m3"), lplab.quantize(b[:40].T.copy(), "mxfp8_e4m3"))


def test_block_scaled_16x16_weights():
    """NVFP4 training's fprop: activations in 1 x 16 blocks, weights in 16 x 16
    (TE's order), rows of three magnitudes. Through the tcgen05 NVFP4
    instruction each weight row's 1 x 16 slices take their 16 x 16 block's
    scale, so the result is the dequantized operands' product within fp32
    accumulation; a wrong block would be off by the magnitudes' ratios."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((4, 64)).astype(np.float32)
    w = (rng.standard_normal((40, 64)) * np.repeat([0.01, 1.0, 30.0], [16, 16, 8])[:, None]).astype(np.float32)
    qa = lplab.quantize(a, "nvfp4_te")
    qw = lplab.quantize(w, "nvfp4_te_2d")
    assert qw.scales.shape == (3 * 4,)
    ref = lplab.dequantize(qa).astype(np.float64) @ lplab.dequantize(qw).astype(np.float64).T
    assert np.allclose(lplab.matmul_blocks(qa, qw, accumulator="fp64"), ref, rtol=1e-6, atol=1e-9)
    inst = "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"
    got = lplab.matmul_blocks(qa, qw, accumulator=inst)
    assert np.allclose(got, ref, rtol=1e-4, atol=1e-6 * np.abs(ref).max())
    # With the per-row (1 x 16) weights the values differ: the block shape reached the instruction.
    q1 = lplab.quantize(w, "nvfp4_te")
    assert not np.allclose(lplab.matmul_blocks(qa, q1, accumulator=inst), got, rtol=1e-6)
