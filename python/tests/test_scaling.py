"""Block, per-tensor and tile scaling against references written here from
the specs (OCP MX v1.0 section 6.3, NVFP4's tensor scale, TE's per-tensor
formula), rounding with ml_dtypes."""
import numpy as np
import pytest

import lplab
from conftest import needs_ml_dtypes


def mx_floor_reference(x, elem_type, emax, max_elem, block=32):
    """OCP MX v1.0 6.3: X = floor(log2 amax) - emax; elements x / 2^X rounded
    to nearest-even with saturation (clip, then round: ml_dtypes does not saturate)."""
    q, scales = [], []
    for i in range(0, x.size, block):
        b = x[i:i + block].astype(np.float64)
        amax = np.abs(b).max()
        X = -127 if amax == 0 else int(np.floor(np.log2(amax))) - emax
        X = max(-127, min(127, X))
        scales.append(X + 127)
        q.append(np.clip(b / 2.0 ** X, -max_elem, max_elem).astype(np.float32).astype(elem_type))
    return np.concatenate(q), np.array(scales, np.uint8)


@needs_ml_dtypes
@pytest.mark.parametrize("scheme, elem, emax, max_elem", [
    ("mxfp8_e4m3", "float8_e4m3fn", 8, 448.0), ("mxfp8_e5m2", "float8_e5m2", 15, 57344.0),
    ("mxfp6_e2m3", "float6_e2m3fn", 2, 7.5), ("mxfp4", "float4_e2m1fn", 2, 6.0)])
def test_mx_schemes_follow_the_spec(scheme, elem, emax, max_elem):
    import ml_dtypes
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(32 * 64) * np.exp(rng.standard_normal(32 * 64) * 3)).astype(np.float32)
    x[:32] = 0.0
    q = lplab.quantize(x, scheme)
    want_q, want_s = mx_floor_reference(x, getattr(ml_dtypes, elem), emax, max_elem)
    assert (q.elems.to_ml_dtypes().astype(np.float32) == want_q.astype(np.float32)).all()
    assert (q.scales.codes == want_s).all()
    y = lplab.dequantize(q)
    ref = want_q.astype(np.float32) * np.repeat(2.0 ** (want_s.astype(np.float64) - 127), 32)
    assert (y == ref.astype(np.float32)).all()


def test_floor_saturates_and_ceil_does_not():
    # scaling.h: E4M3 amax 500, floor: X = 8 - 8 = 0, 500 -> 448; ceil: X = 1, 500 -> 250 -> 256.
    x = np.full(32, 1.0, np.float32)
    x[0] = 500.0
    fl = lplab.quantize(x, "mxfp8_e4m3")
    ce = lplab.quantize(x, "mxfp8_e4m3", rule="ceil")
    assert fl.scales.numpy()[0] == 1.0 and fl.elems.numpy()[0] == 448.0
    assert ce.scales.numpy()[0] == 2.0 and ce.elems.numpy()[0] == 256.0
    assert lplab.dequantize(ce)[0] == 512.0


def test_the_libraries_power_of_two_rules():
    # docs/recipes.md, E4M3 into E8M0: the scale 2^X for each amax and rule.
    cases = {  # amax: (floor, ceil, rceil, even, ceil_amax)
        300.0: (0, 0, 0, 0, 1),    # torchao's CEIL: ceil(log2 300) - 8 = 1; 300 <= 448
        495.0: (0, 1, 1, 0, 1),    # rounds to 1.875 * 2^8
        496.0: (0, 1, 1, 1, 1),    # the tie goes away, to 2^9
        448.0: (0, 0, 0, 0, 1),
        float(np.nextafter(np.float32(448.0 * 2.0**-127), np.float32(1))): (-127, -126, -127, -127, -126),
    }
    rules = ("floor", "ceil", "rceil", "even", "ceil_amax")
    for amax, want in cases.items():
        x = np.zeros(32, np.float32)
        x[3] = amax
        for rule, xw in zip(rules, want):
            got = lplab.quantize(x, "mxfp8_e4m3", rule=rule).scales.numpy()[0]
            assert got == np.float32(2.0**xw), (amax, rule, got)


def test_nvfp4_tensor_scale_and_packing():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4096).astype(np.float32)
    q = lplab.quantize(x, "nvfp4")
    assert q.tensor_scale == np.float32(np.float32(6 * 448) / np.float32(np.abs(x).max()))
    p = lplab.quantize(x, "nvfp4", packed=True)
    assert (p.elems == lplab.pack(q.elems)).all()
    assert (lplab.dequantize(p) == lplab.dequantize(q)).all()
    assert p.nbytes == 4096 // 2 + 4096 // 16 + 4  # 4.5 bits an element, plus the fp32 tensor scale
    err = lplab.dequantize(q) - x
    sqnr = 10 * np.log10((x ** 2).sum() / (err ** 2).sum())
    assert 18 < sqnr < 25  # NVFP4 on N(0, 1): about 21 dB


def test_two_threads_give_the_same_bits():
    x = np.random.default_rng(2).standard_normal(1 << 20).astype(np.float32)
    a = lplab.quantize(x, "mxfp4", packed=True, threads=1)
    b = lplab.quantize(x, "mxfp4", packed=True, threads=2)
    assert (a.elems == b.elems).all() and a.scales == b.scales


def test_custom_scheme_and_shape():
    x = np.arange(-24, 24, dtype=np.float32).reshape(4, 12) / 4
    q = lplab.quantize(x, None, elem="e5m2", scale="e8m0", block_size=12, rule="ceil")
    assert q.scales.shape == (4,) and q.elems.shape == (4, 12)
    assert lplab.dequantize(q).shape == (4, 12)


@needs_ml_dtypes
def test_per_tensor_scaling():
    import ml_dtypes
    x = np.array([0.5, -3.0, 100.0, 1e-3], np.float32)
    q, s, a = lplab.quantize_tensor(x, "e4m3")
    assert a == 100.0 and s == np.float32(448.0) / np.float32(100.0)
    want = np.clip(x * s, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    assert (q.to_ml_dtypes() == want).all()
    assert (lplab.dequantize_tensor(q, s) == want.astype(np.float32) / s).all()
    q2, s2, _ = lplab.quantize_tensor(x, "e4m3", margin=1, amax="history_max", history=[200.0, 50.0])
    assert s2 == np.float32(448.0 / 200.0) / 2


def test_tiles():
    x = np.random.default_rng(3).standard_normal((3, 300)).astype(np.float32)
    q, s = lplab.quantize_tiles(x, tile=(1, 128))
    assert s.shape == (3, 3)
    assert s[0, 0] == np.float32(max(np.abs(x[0, :128]).max(), 1e-4)) / np.float32(448)
    y = lplab.dequantize_tiles(q, s, tile=(1, 128))
    assert y.shape == x.shape and np.abs(y - x).max() < 0.07 * np.abs(x).max()


@pytest.mark.parametrize("bad, message", [
    (lambda: lplab.quantize(np.ones(4, np.float32), "mxfp9"), "unknown block scheme"),
    (lambda: lplab.quantize(np.ones(4, np.float32), None, elem="bf16", scale="e8m0"), "no block scaling"),
    (lambda: lplab.quantize(np.ones(4, np.float32), "mxfp8_e4m3", block_size=0), "block_size 0"),
    (lambda: lplab.quantize(np.ones(4, np.float32), "mxfp8_e4m3", rule="round"), "unknown scale rule"),
    (lambda: lplab.quantize(np.ones(4, np.float32), "mxfp8_e4m3", packed=True), "not a packed format"),
    (lambda: lplab.quantize(np.ones(4), "mxfp8_e4m3"), "float32"),
    (lambda: lplab.quantize_tiles(np.ones(4, np.float32)), "2-D"),
    (lambda: lplab.quantize_tensor(np.ones(4, np.float32), amax="history_max"), "none was given"),
])
def test_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def _to_blocked(s, pad=0):
    # torchao's to_blocked (torchao/prototype/mx_formats/utils.py, v0.18.0) as
    # its tensor operations: pad, view (nR, 128, nC, 4), permute (0, 2, 1, 3),
    # reshape (-1, 4, 32, 4), transpose (1, 2), flatten.
    rows, cols = s.shape
    nr, nc = -(-rows // 128), -(-cols // 4)
    p = np.full((nr * 128, nc * 4), pad, np.uint8)
    p[:rows, :cols] = s
    return p.reshape(nr, 128, nc, 4).transpose(0, 2, 1, 3).reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3).ravel()


def test_swizzled_scales_are_torchaos_blocked_layout():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((300, 7 * 32)) * 2.0 ** rng.integers(-20, 20, (300, 1))).astype(np.float32)
    q = lplab.quantize(x, "mxfp8_e4m3")
    grid = q.scales.codes.reshape(300, 7)
    sw = lplab.swizzle_scales(q.scales.codes.reshape(300, 7))
    assert sw.dtype == np.uint8 and sw.shape == (3 * 2 * 512,)
    assert (sw == _to_blocked(grid)).all()
    assert (lplab.swizzle_scales(grid, pad=127) == _to_blocked(grid, 127)).all()
    assert (lplab.unswizzle_scales(sw, 300, 7) == grid).all()
    with pytest.raises(ValueError, match="layout is 3072 bytes, not 3071"):
        lplab.unswizzle_scales(sw[:-1], 300, 7)
    with pytest.raises(ValueError, match="2-D uint8"):
        lplab.swizzle_scales(grid.ravel())
    with pytest.raises(ValueError, match="one-byte scale codes"):
        lplab.swizzle_scales(grid.astype(np.int64))
    sa = lplab.quantize(x, "mxfp8_e4m3").scales
    assert (lplab.swizzle_scales(lplab.Array(sa.codes.reshape(300, 7), sa.format)) == sw).all()


def test_cvt_rs_follows_the_carry_rule_per_instruction():
    # E2M1: 2.5 is half way from 2 to 3 (D = 128 of 256): with r from the
    # Philox stream, element j of group g rounds up iff its byte >= 128.
    x = np.full(64, 2.5, np.float32)
    got = lplab.cvt_rs(x, "e2m1x4", seed=7, subsequence=1).codes
    assert set(np.unique(got)) == {0x4, 0x5}
    again = lplab.cvt_rs(x, "e2m1x4", seed=7, subsequence=1).codes
    assert np.array_equal(got, again)
    other = lplab.cvt_rs(x, "e2m1x4", seed=7, subsequence=2).codes
    assert not np.array_equal(got, other)
    # bf16x2 with .satfinite: NaN is 0x7FFF, infinity the signed maximum.
    y = lplab.cvt_rs(np.array([np.nan, -np.inf], np.float32), "bf16x2").codes
    assert y.tolist() == [0x7FFF, 0xFF7F]
    assert lplab.cvt_rs(np.float32([1.0]), "e4m3x4").format == "float8_e4m3fn"
    with pytest.raises(ValueError, match="satfinite"):
        lplab.cvt_rs(x, "e2m1x4", satfinite=False)
    with pytest.raises(ValueError, match="sm_100a"):
        lplab.cvt_rs(x, "e2m1x4", layout="sm_90a")


def test_hadamard_is_te_s_and_inverts():
    spike = np.zeros((1, 16), np.float32)
    spike[0, 5] = 448.0
    assert np.array_equal(np.abs(lplab.hadamard(spike)), np.full((1, 16), 112.0, np.float32))
    x = np.arange(64, dtype=np.float32).reshape(2, 32) - 20
    y = lplab.hadamard(x, bf16=False)
    assert np.array_equal(lplab.hadamard(y, bf16=False, inverse=True), x)
    with pytest.raises(ValueError, match="multiple of 16"):
        lplab.hadamard(np.zeros((2, 17), np.float32))
    with pytest.raises(ValueError, match="16-bit mask"):
        lplab.hadamard(x, signs=-1)


def test_four_over_six_picks_the_closer_scale():
    t = np.zeros(32, np.float32)
    t[0] = 6.0
    t[16:20] = [4.0, 3.0, 2.0, 1.0]
    q, s, amax, fours = lplab.quantize_four_over_six(t)
    assert amax == 6.0 and fours == 1
    assert s.codes.tolist() == [0x78, 0x78]  # 256 and 256
    back = lplab.dequantize_four_over_six(q, s, amax)
    assert np.array_equal(back[16:20], t[16:20])
    with pytest.raises(ValueError, match="codes: an Array of float8_e4m3fn"):
        lplab.dequantize_four_over_six(s, q, amax)
    with pytest.raises(ValueError, match="multiple of 16"):
        lplab.quantize_four_over_six(np.zeros((2, 24), np.float32))


def test_ue5m3_is_a_format_and_a_block_scale():
    f = lplab.finfo("ue5m3")
    assert f.max == 114688 and f.smallest_subnormal == 2.0 ** -17 and not f.is_signed
    assert lplab.convert(np.float32([1.0, 114688.0, -1.0]), "ue5m3").codes.tolist() == [0x78, 0xFE, 0xFF]
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    q = lplab.quantize(x, None, elem="float4_e2m1fn", scale="ue5m3", block_size=16, rule="amax_ratio",
                       tensor_scale=True)
    assert np.max(np.abs(lplab.dequantize(q) - x)) < 0.5


def test_recipes_as_data():
    names = lplab.recipes()
    assert names[:3] == ["fp32", "bf16_amp", "fp16_gradscaler"]
    assert {"fp8_delayed", "fp8_current", "fp8_blockwise", "mxfp8", "nvfp4_training", "nvfp4_4over6"} <= set(names)
    nv = lplab.recipe("nvfp4_training")
    fprop, dgrad, wgrad = (nv["gemms"][g] for g in ("fprop", "dgrad", "wgrad"))
    assert fprop["b"]["block"] == [16, 16] and fprop["a"]["block"] == [1, 16]
    assert (dgrad["a"]["round"], dgrad["b"]["round"]) == ("stochastic", "nearest_even")
    assert (wgrad["a"]["hadamard"], wgrad["b"]["hadamard"], fprop["a"]["hadamard"]) == (True, True, False)
    assert fprop["a"]["scale_format"] == "float8_e4m3fn" and fprop["a"]["scale_rule"] == "amax_ratio_te"
    gens = {g["generation"]: g for g in nv["generations"]}
    assert list(gens)[:4] == ["volta", "turing", "ampere", "ada"] and len(gens) == 10
    assert not gens["hopper"]["supported"]
    assert gens["blackwell"]["presets"]["wgrad"] == "blackwell.tcgen05.mxf4nvf4.block16.f32.e2m1.e2m1.ue4m3"
    # Every preset a recipe names is an accumulator lplab.matmul takes.
    known = {name for name, _, _ in lplab.accumulators()}
    for name in names:
        for g in lplab.recipe(name)["generations"]:
            for preset in (g.get("presets") or {}).values():
                assert preset is None or preset in known, (name, preset)
    # A block operand's parameters are quantize's.
    a = lplab.recipe("mxfp8")["gemms"]["fprop"]["a"]
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    q = lplab.quantize(x, None, elem=a["format"], scale=a["scale_format"], block_size=a["block"][1],
                       rule=a["scale_rule"], tensor_scale=a["tensor_scale"])
    assert (q.scale, q.block_size, q.rule) == ("float8_e8m0fnu", 32, "rceil")
    with pytest.raises(ValueError, match=r"unknown recipe 'mxfp9' \(did you mean 'mxfp8'\?\)"):
        lplab.recipe("mxfp9")


@needs_ml_dtypes
def test_nvfp4_16x16_weights_against_numpy():
    """NVFP4 training's 2D weights (arXiv 2509.25149 section 4): one E4M3 scale
    per 16 x 16 block from the block's amax, NVFP4's float32 formula written
    here with numpy and ml_dtypes."""
    import ml_dtypes
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((48, 80)) * np.exp(rng.uniform(-4, 4, (48, 1)))).astype(np.float32)
    q = lplab.quantize(w, "nvfp4_2d")
    assert q.scales.shape == (3 * 5,) and q.elems.shape == (48, 80)
    f32 = np.float32
    s_enc = f32(6 * 448) / f32(np.abs(w).max())
    assert q.tensor_scale == s_enc
    tiles = np.abs(w).reshape(3, 16, 5, 16).max(axis=(1, 3)).astype(f32)
    v = (tiles / f32(6)) * s_enc
    scales = np.clip(v, 0, 448).astype(ml_dtypes.float8_e4m3fn)
    assert (q.scales.codes == scales.reshape(-1).view(np.uint8)).all()
    k = s_enc / scales.astype(f32)
    kk = np.repeat(np.repeat(k, 16, axis=0), 16, axis=1)
    elems = np.clip(w * kk, -6, 6).astype(ml_dtypes.float4_e2m1fn)
    assert (q.elems.codes == elems.view(np.uint8)).all()
    # 1 x 16 blocks give different codes on the same matrix, and the 2D scales
    # are fewer: 4 + 8/256 bits an element.
    assert (lplab.quantize(w, "nvfp4").elems.codes != q.elems.codes).any()
    assert q.nbytes == 48 * 80 // 2 + 15 + 4
    back = lplab.dequantize(q)
    assert back.shape == (48, 80)
    assert (back == (elems.astype(f32) * np.repeat(np.repeat(scales.astype(f32), 16, 0), 16, 1)) / s_enc).all()
    with pytest.raises(ValueError, match="blocks of 16 rows need a matrix"):
        lplab.quantize(w.reshape(-1), "nvfp4_2d")
    # Transposed weights, transposed blocks: the same codes.
    qt = lplab.quantize(np.ascontiguousarray(w.T), "nvfp4_2d")
    assert (qt.elems.codes == q.elems.codes.T).all()


def test_stochastic_rounding_of_blocks_is_cvt_rs_of_the_scaled_values():
    """rounding='cvt_rs': NVFP4's scales as to nearest, each element cvt.rs of
    x * (s_enc / scale) (amax_ratio's k) with the stream's bits, unbiased."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    near = lplab.quantize(x, "nvfp4")
    sr = lplab.quantize(x, "nvfp4", rounding="cvt_rs", seed=11, subsequence=2)
    assert (sr.scales.codes == near.scales.codes).all() and sr.tensor_scale == near.tensor_scale
    k = np.float32(near.tensor_scale) / near.scales.numpy()
    scaled = (x.reshape(-1) * np.repeat(k, 16)).astype(np.float32)
    want = lplab.cvt_rs(scaled, "e2m1x4", seed=11, subsequence=2)
    assert (sr.elems.codes.reshape(-1) == want.codes).all()
    assert (sr.elems.codes != near.elems.codes).any()
    # The same bits packed, and through lplab's own stream another draw.
    assert (lplab.quantize(x, "nvfp4", rounding="cvt_rs", seed=11, subsequence=2, packed=True).elems ==
            lplab.pack(sr.elems)).all()
    assert (lplab.quantize(x, "nvfp4", rounding="cvt_rs", seed=11, stream="lplab").elems.codes != sr.elems.codes).any()
    with pytest.raises(ValueError, match="rounding"):
        lplab.quantize(x, "nvfp4", rounding="up")
    with pytest.raises(ValueError, match="no cvt.rs form"):
        lplab.quantize(x, None, elem="float8_e4m3fnuz", scale="e8m0", rounding="cvt_rs")


def test_four_over_six_16x16_blocks_choose_for_all_their_rows():
    """A 16 x 16 block of 5 with one 6: 5/6 of the maximum ties 4 and 6 on the
    6-grid (error 1) and lands on 3 of the 4-grid (error 0.5): the block maps
    to 4, each value 4.5 or 6."""
    x = np.full((16, 32), 5.0, np.float32)
    x[0, 3] = 6.0
    x[:, 16:] = np.linspace(-1, 1, 16 * 16, dtype=np.float32).reshape(16, 16)
    q, s, amax, fours = lplab.quantize_four_over_six(x, metric="mae", order="te", block_rows=16)
    assert s.shape == (2,) and fours >= 1
    back = lplab.dequantize_four_over_six(q, s, amax, block_rows=16)
    assert back.shape == (16, 32)
    left = back[:, :16]
    assert set(np.unique(left)) <= {np.float32(4.5), np.float32(6.0)}
    assert abs(left[5, 5] - 4.5) < 0.01
    with pytest.raises(ValueError, match="order='te'"):
        lplab.quantize_four_over_six(x, block_rows=16)


def test_te_blockwise_tiles():
    """TE's Float8BlockScaling: s = 448 / amax (mantissa cleared for te_pow2),
    stored 1 / s; an all-zero tile keeps s = 1."""
    x = np.zeros((2, 256), np.float32)
    x[0, :128] = np.linspace(-3, 3, 128, dtype=np.float32)
    x[1, 128:] = 1e-3
    codes, scales = lplab.quantize_tiles(x, tile=(1, 128), rule="te")
    assert scales[0, 0] == np.float32(1) / (np.float32(448) / np.float32(3))
    assert scales[0, 1] == 1.0 and scales[1, 0] == 1.0
    c2, s2 = lplab.quantize_tiles(x, tile=(1, 128), rule="te_pow2")
    assert s2[0, 0] == 2.0 ** -7  # 448 / 3 = 149.3 -> 128
    assert s2[1, 1] == 2.0 ** -18  # 448 / 1e-3 = 448000 -> 2^18
    back = lplab.dequantize_tiles(c2, s2)
    assert np.allclose(back, x, rtol=0.07, atol=0)
    with pytest.raises(ValueError, match="tile rule"):
        lplab.quantize_tiles(x, rule="ds")


def test_tile_schemes_are_block_schemes_with_fp32_scales():
    """deepseek_* and te_blockwise_* are block schemes of float32 scales, equal
    to quantize_tiles code for code and scale for scale."""
    schemes = lplab.block_schemes()
    assert schemes["te_blockwise_128x128"][:2] == ("float8_e4m3fn", "float32")
    assert schemes["deepseek_128x128"][5] == 128
    rng = np.random.default_rng(5)
    x = rng.standard_normal((130, 300)).astype(np.float32)
    x[3, 7] = np.nan
    x[140 // 2, 2] = np.inf
    for name, tile, rule in [("deepseek_1x128", (1, 128), "deepseek"), ("deepseek_128x128", (128, 128), "deepseek"),
                             ("te_blockwise_1x128", (1, 128), "te_pow2"),
                             ("te_blockwise_128x128", (128, 128), "te_pow2")]:
        q = lplab.quantize(x, name, rows=True)
        codes, scales = lplab.quantize_tiles(x, tile=tile, rule=rule,
                                             amax_floor=1e-4 if rule == "deepseek" else 0.0)
        assert (q.elems.codes == codes.codes).all(), name
        assert np.array_equal(np.asarray(q.scales, np.float32).reshape(-1), scales.reshape(-1), equal_nan=True), name


def test_fp32_tiles_on_hoppers_wgmma_promote_with_their_scales():
    """DeepSeek-V3's tiles through Hopper's FP8 wgmma: each block of 128 along
    K chained from 0 and promoted as fma(s_a * s_b, D, acc) in fp32 -- near
    the exact product of the dequantized operands, not equal to it."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 256)).astype(np.float32)
    b = rng.standard_normal((256, 130)).astype(np.float32)
    qa = lplab.quantize(a, "deepseek_1x128", rows=True)
    qb = lplab.quantize(b.T.copy(), "deepseek_128x128")
    c = np.asarray(lplab.matmul_blocks(qa, qb, accumulator="hopper.wgmma.f32.e4m3.e4m3"), np.float64)
    exact = np.asarray(lplab.matmul_blocks(qa, qb, accumulator="fp64"), np.float64)
    assert np.abs(c - exact).max() <= 2.0 ** -10 * np.abs(exact).max()
    assert (c != exact).any()
    with pytest.raises(ValueError, match="promoted once a block of 128"):
        lplab.matmul_blocks(qa, qb, accumulator="hopper.wgmma.f32.e4m3.e4m3", promote_every=256)
