"""Integer scaling (kernels/integer_scaling.h) against a NumPy float32
implementation of each source's formula, written from the sources
(torchao quant_primitives.py, AutoGPTQ quantizer.py and qlinear_cuda_old.py,
AutoAWQ quantizer.py and gemm.py, SmoothQuant fake_quant.py; the formulas and
line numbers are in docs/integer-scaling.md) and not from lplab's code: every
code, scale, zero point and dequantized value bit for bit, for every rule on
every element and scale format it takes, on N(0, 1) weights and on groups
built to hit the rules' edges (ties at a code's midpoint, groups of one sign,
constant and all-zero groups, huge and subnormal values, a ragged last group,
NaN and infinity)."""
import itertools

import ml_dtypes
import numpy as np
import pytest

import lplab

F32 = np.float32
RULES = ["absmax", "torchao_symmetric", "gptq", "awq", "torchao_asymmetric", "tinygemm"]
SIGNED = {"absmax": True, "torchao_symmetric": True, "gptq": False, "awq": False, "tinygemm": False}
ELEMS = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}
SCALES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}
ZERO = {"absmax": None, "torchao_symmetric": None, "gptq": "integer", "awq": "integer",
        "torchao_asymmetric": "integer", "tinygemm": "floating"}


def store(v, scale):
    """v rounded into the scale format (nearest-even, saturating), as float32."""
    t = SCALES[scale]
    big = float(ml_dtypes.finfo(t).max) if t is not np.float32 else float(np.finfo(np.float32).max)
    if np.isfinite(v) and abs(float(v)) > big:
        v = F32(np.sign(v) * big)
    return F32(np.asarray(v, F32).astype(t).astype(F32))


def smallest(scale):
    t = SCALES[scale]
    return F32(ml_dtypes.finfo(t).smallest_subnormal if t is not np.float32 else np.finfo(np.float32).smallest_subnormal)


def reference_group(rule, x, elem, scale):
    """(codes, stored scale, stored zero or None, dequantized) of one group."""
    qmin, qmax = (F32(v) for v in ELEMS[elem])
    if not np.all(np.isfinite(x)):
        nan = F32(np.nan)
        return (np.zeros(x.size), nan, (F32(0) if ZERO[rule] == "integer" else nan) if ZERO[rule] else None,
                np.full(x.size, np.nan, F32))
    lo = x.min() if x.size else F32(0)
    hi = x.max() if x.size else F32(0)
    amax = max(-lo, hi)
    z = None
    if rule == "absmax":  # SmoothQuant: clamp_(min=1e-5).div_(q_max); w.div_(scales).round_()
        s = np.maximum(amax, F32(1e-5)) / qmax
    elif rule == "torchao_symmetric":  # max_val_pos / (float(quant_max - quant_min) / 2), clamp(min=eps)
        s = np.maximum(amax / F32((float(qmax) - float(qmin)) / 2), F32(2.0**-23))
    else:
        if rule in ("gptq", "torchao_asymmetric"):
            lo, hi = min(lo, F32(0)), max(hi, F32(0))
        if rule == "gptq" and lo == 0 and hi == 0:
            lo, hi = F32(-1), F32(1)
        rng = hi - lo
        if rule == "awq":
            rng = np.maximum(rng, F32(1e-5))
        s = rng / (qmax - qmin)
        if rule == "torchao_asymmetric":
            s = np.maximum(s, F32(2.0**-23))
        if rule == "tinygemm":
            s = np.maximum(s, F32(1e-6))
        if rule == "gptq":
            z = np.clip(np.round(-lo / s), qmin, qmax)
        elif rule == "awq":
            z = np.clip(-np.round(lo / s), qmin, qmax)
        elif rule == "torchao_asymmetric":
            z = np.clip(qmin - np.round(lo / s), qmin, qmax)
        else:
            z = lo + s * ((qmax + qmin + F32(1)) / F32(2))
    s_st = store(s, scale)
    if s_st == 0:
        s_st = smallest(scale)
    if rule == "absmax":
        q = integer_codes(np.clip(np.round(x / s_st), -qmax, qmax))
        y = q * s_st
    elif rule == "torchao_symmetric":
        q = integer_codes(np.clip(np.round(x * (F32(1) / s_st)), qmin, qmax))
        y = q * s_st
    elif rule == "tinygemm":
        mid = (qmax + qmin + F32(1)) / F32(2)
        z = store(z, scale)
        q = integer_codes(np.clip(np.round((x - (z - s_st * mid)) / s_st), qmin, qmax))
        y = (q - mid) * s_st + z
    else:
        v = x * (F32(1) / s_st) if rule == "torchao_asymmetric" else x / s_st
        q = integer_codes(np.clip(np.round(v) + z, qmin, qmax))
        y = (q - z) * s_st
    return q, s_st, z, y.astype(F32)


def integer_codes(q):
    """Codes as the integer tensor stores them: no -0 (torchao's .to(int8))."""
    return q + F32(0)


def reference(rule, x, elem, scale, group, per_tensor):
    cols = x.shape[-1]
    rows = x.reshape(-1, cols)
    g = cols if group == 0 else group
    qs, ss, zs, ys = [], [], [], []
    chunks = [x.reshape(-1)] if per_tensor else [r[c:c + g] for r in rows for c in range(0, cols, g)]
    for chunk in chunks:
        q, s, z, y = reference_group(rule, chunk, elem, scale)
        qs.append(q), ss.append(s), zs.append(z), ys.append(y)
    return (np.concatenate(qs), np.array(ss, F32), None if ZERO[rule] is None else np.array(zs, F32),
            np.concatenate(ys))


def adversarial(cols=96):
    """Rows hitting each rule's edges: every row is also split into groups."""
    rng = np.random.default_rng(46)
    rows = [
        rng.standard_normal(cols),
        (np.arange(cols) - cols / 2) * 0.5 + 0.25,  # midpoints between codes for power-of-two scales
        np.full(cols, 0.0),
        np.full(cols, 3.0),
        np.full(cols, -2.5),
        np.abs(rng.standard_normal(cols)) + 0.5,     # one sign: GPTQ's zero point 0, AWQ's clamp
        -np.abs(rng.standard_normal(cols)) - 0.5,
        np.where(np.arange(cols) % 2 == 0, 1e30, -1e-30),
        rng.standard_normal(cols) * 1e-40,            # subnormal floats: scales below float16's range
        rng.standard_normal(cols) * 6e4,
        np.linspace(-7.5, 7.5, cols),
        rng.integers(-8, 8, cols) * 0.125 + 0.0625,
    ]
    return np.array(rows, dtype=F32)


def combos():
    for rule, elem, scale in itertools.product(RULES, ELEMS, SCALES):
        signed = elem.startswith("int")
        if rule != "torchao_asymmetric" and SIGNED[rule] != signed:
            continue
        yield rule, elem, scale


def check(x, rule, elem, scale, group, per_tensor=False):
    q = lplab.quantize_integer(x, None, elem=elem, scale=scale, rule=rule, group_size=group, per_tensor=per_tensor)
    rq, rs, rz, ry = reference(rule, x, elem, scale, group, per_tensor)
    where = f"{rule} {elem} {scale} group {group}"
    np.testing.assert_array_equal(q.codes.numpy().reshape(-1), rq, err_msg=where + ": codes")
    np.testing.assert_array_equal(q.scales.numpy(), rs, err_msg=where + ": scales")
    if rz is None:
        assert q.zeros is None
    else:
        np.testing.assert_array_equal(q.zeros.numpy(), rz, err_msg=where + ": zero points")
    y = lplab.dequantize(q).reshape(-1)
    np.testing.assert_array_equal(y.view(np.uint32)[~np.isnan(y)], ry.view(np.uint32)[~np.isnan(ry)],
                                  err_msg=where + ": values")
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ry), err_msg=where + ": NaN")


@pytest.mark.parametrize("rule,elem,scale", list(combos()))
def test_every_rule_element_and_scale_on_adversarial_rows(rule, elem, scale):
    x = adversarial()
    for group in (0, 32, 40):  # 40: a ragged last group of 16
        check(x, rule, elem, scale, group)
    check(x, rule, elem, scale, 0, per_tensor=True)


@pytest.mark.parametrize("scheme", list(lplab.integer_schemes()))
def test_named_schemes_on_normal_weights(scheme):
    e, s, r, g, t = lplab.integer_schemes()[scheme]
    x = np.random.default_rng(1).standard_normal((16, 512)).astype(F32)
    q = lplab.quantize(x, scheme)
    assert isinstance(q, lplab.IntegerQuantized)
    rq, rs, rz, ry = reference(r, x, e, s, g, t)
    np.testing.assert_array_equal(q.codes.numpy().reshape(-1), rq)
    np.testing.assert_array_equal(q.scales.numpy(), rs)
    np.testing.assert_array_equal(q.dequantize().reshape(-1), ry)


def test_non_finite_groups_only():
    x = np.full((2, 64), 7.5, F32)  # [0, 7.5]: scale 0.5, exact in fp16
    x[0, 3] = np.nan
    x[1, 40] = np.inf
    q = lplab.quantize_integer(x, "int4_g32")
    s = q.scales.numpy()
    assert np.isnan(s[0]) and not np.isnan(s[1]) and not np.isnan(s[2]) and np.isnan(s[3])
    y = q.dequantize()
    assert np.isnan(y[0, :32]).all() and (y[0, 32:] == 7.5).all() and np.isnan(y[1, 32:]).all()


# ---------------------------------------------------------------------------
# Checkpoint layouts against the sources' packing loops.

def gptq_pack(q, zeros, scales, bits, v1):
    """AutoGPTQ qlinear_cuda_old.py pack (L125-176): qweight along K, qzeros
    (zero - 1 in v1) along N, LSB first; scales transposed."""
    n, k = q.shape
    per = 32 // bits
    intweight = q.T.astype(np.uint32)  # [K, N]
    qweight = np.zeros((k // per, n), np.uint32)
    for row in range(k // per):
        for j in range(per):
            qweight[row] |= intweight[row * per + j] << np.uint32(bits * j)
    z = zeros.T.astype(np.int64) - (1 if v1 else 0)  # [G, N]
    z = z.astype(np.uint32)
    qzeros = np.zeros((z.shape[0], n // per), np.uint32)
    for col in range(n // per):
        for j in range(per):
            qzeros[:, col] |= z[:, col * per + j] << np.uint32(bits * j)
    return qweight.view(np.int32), qzeros.view(np.int32)


def awq_pack(q, zeros):
    """AutoAWQ WQLinear_GEMM.from_linear (gemm.py L205-248): along N with the
    order map [0, 2, 4, 6, 1, 3, 5, 7]."""
    order = [0, 2, 4, 6, 1, 3, 5, 7]
    intweight = q.T.astype(np.uint32)  # [K, N]
    n = intweight.shape[1]
    qweight = np.zeros((intweight.shape[0], n // 8), np.uint32)
    for col in range(n // 8):
        for i in range(8):
            qweight[:, col] |= intweight[:, col * 8 + order[i]] << np.uint32(4 * i)
    z = zeros.T.astype(np.uint32)
    qzeros = np.zeros((z.shape[0], n // 8), np.uint32)
    for col in range(n // 8):
        for i in range(8):
            qzeros[:, col] |= z[:, col * 8 + order[i]] << np.uint32(4 * i)
    return qweight.view(np.int32), qzeros.view(np.int32)


def awq_unpack(qweight):
    """AutoAWQ packing_utils.py unpack_awq + reverse_awq_order."""
    shifts = np.arange(0, 32, 4, dtype=np.uint32)
    w = (qweight.view(np.uint32)[:, :, None] >> shifts[None, None, :]).reshape(qweight.shape[0], -1)
    reverse = np.array([0, 4, 1, 5, 2, 6, 3, 7])
    idx = np.arange(w.shape[1]).reshape(-1, 8)[:, reverse].reshape(-1)
    return (w[:, idx] & 0xF).T  # [N, K]


@pytest.mark.parametrize("scheme,layout,bits", [("int4_g128", "gptq", 4), ("int4_g128", "gptq_v2", 4),
                                                ("int4_g128_awq", "awq", 4), ("int2_g64", "gptq_v2", 2)])
def test_checkpoint_layouts(scheme, layout, bits):
    e, s, r, g, _ = lplab.integer_schemes()[scheme]
    x = np.random.default_rng(7).standard_normal((64, 256)).astype(F32)
    q = lplab.quantize(x, scheme)
    codes = q.codes.numpy().astype(np.int64).reshape(64, 256)
    zeros = q.zeros.numpy().astype(np.int64).reshape(64, -1)
    if layout == "gptq" and (zeros == 0).any():
        pytest.skip("a zero point of 0: gptq v1 refuses it (tested below)")
    t = lplab.to_checkpoint(q, layout)
    if layout == "awq":
        qw, qz = awq_pack(codes, zeros)
        np.testing.assert_array_equal(awq_unpack(t["qweight"]), codes)
    else:
        qw, qz = gptq_pack(codes, zeros, None, bits, layout == "gptq")
    np.testing.assert_array_equal(t["qweight"], qw)
    np.testing.assert_array_equal(t["qzeros"], qz)
    np.testing.assert_array_equal(t["scales"].numpy(), q.scales.numpy().reshape(64, -1).T)
    back = lplab.from_checkpoint(t["qweight"], t["qzeros"], t["scales"], layout, scheme=scheme)
    np.testing.assert_array_equal(back.codes.numpy().reshape(64, 256), codes)
    np.testing.assert_array_equal(back.zeros.numpy(), q.zeros.numpy())
    np.testing.assert_array_equal(lplab.dequantize(back), lplab.dequantize(q))


def test_gptq_v1_refuses_a_zero_point_of_zero():
    x = np.abs(np.random.default_rng(3).standard_normal((8, 128))).astype(F32)  # all >= 0: zero point 0
    q = lplab.quantize(x, "int4_g128")
    assert (q.zeros.numpy() == 0).all()
    with pytest.raises(ValueError, match="zero point 0"):
        lplab.to_checkpoint(q, "gptq")
    lplab.to_checkpoint(q, "gptq_v2")


def test_errors():
    x = np.ones((4, 8), F32)
    with pytest.raises(ValueError, match="unsigned"):
        lplab.quantize_integer(x, None, elem="int4", scale="float16", rule="gptq")
    with pytest.raises(ValueError, match="integer scaling's elements"):
        lplab.quantize_integer(x, None, elem="float8_e4m3fn", scale="float16", rule="absmax")
    with pytest.raises(ValueError, match="unknown integer scheme"):
        lplab.quantize_integer(x, "int3_g7")
    with pytest.raises(ValueError, match="float32"):
        lplab.quantize_integer(x.astype(np.float64), "int4_g128")
    q = lplab.quantize(np.ones((4, 128), F32), "int4_g128_awq")
    with pytest.raises(ValueError):
        lplab.to_checkpoint(lplab.quantize(np.ones((4, 128), F32), "int8_channel"), "gptq")
    assert q.nbytes == 4 * 128 // 2 + 4 * 2 + 4 // 2


# ---------------------------------------------------------------------------
# SmoothQuant's smoothing against smooth.py's formula in NumPy float32.

def test_smoothquant_smoothing():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 48)).astype(F32)
    x[:, 7] *= 60  # an outlier channel, as in the paper's Figure 4
    x[:, 9] = 0    # a dead channel: s = max(0 / w, 1e-5)
    w = (rng.standard_normal((32, 48)) * 0.05).astype(F32)
    for alpha in (0.5, 0.75, 0.85, 1.0, 0.0):
        xs, ws, s = lplab.smoothquant(x, w, alpha)
        a = np.abs(x).max(axis=0)
        wm = np.maximum(np.abs(w).max(axis=0), F32(1e-5))
        beta = F32(1 - alpha)  # Python: 1 - alpha in double, then the float32 exponent
        pa = np.sqrt(a) if alpha == 0.5 else np.power(a, F32(alpha))
        pw = np.sqrt(wm) if beta == F32(0.5) else np.power(wm, beta)
        want = np.maximum(pa / pw, F32(1e-5))
        np.testing.assert_array_equal(s, want, err_msg=f"alpha {alpha}")
        np.testing.assert_array_equal(xs, x / want)
        np.testing.assert_array_equal(ws, w * want)
    # The outlier moves into the weights: per-tensor INT8 of x / s loses far less.
    xs, ws, s = lplab.smoothquant(x, w, 0.5)
    err = lambda v: np.abs(lplab.dequantize(lplab.quantize(v, "int8_tensor")) - v).mean() / np.abs(v).mean()
    assert err(xs) < err(x) / 3  # 0.052 against 0.188 with this seed
    with pytest.raises(ValueError):
        lplab.smoothquant(x, w[:, :40], 0.5)
