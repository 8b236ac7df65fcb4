"""lplab.convert / decode / encode / pack against ml_dtypes, the C++ API and
the scalar core, on every catalog format, rounding and overflow policy."""
import os
import signal
import subprocess
import threading

import numpy as np
import pytest

import lplab
from conftest import built, codes_view, needs_ml_dtypes, same_values, theirs

FORMATS = lplab.formats()
NARROW = [f for f in FORMATS if f != "float32"]
# The floating-point ones: ml_dtypes' astype into an integer truncates and
# wraps (python/tests/test_integers.py compares the integers).
NARROW_FLOATS = [f for f in NARROW if lplab.finfo(f).encoding != "integer"]
ROUNDINGS = ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "stochastic"]


def all_codes(fmt):
    bits = lplab.finfo(fmt).bits
    dtype = np.uint8 if bits <= 8 else np.uint16
    return lplab.Array(np.arange(1 << bits, dtype=np.uint32).astype(dtype), fmt)


def sample(n=200_000, seed=1):
    """float32 inputs across the whole range, specials and ties included."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    spec = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 448.0, 464.0, 465.0, 57344.0, 61440.0, 6.0, 7.0,
                     2.0 ** -9, 2.0 ** -10, 2.0 ** -126, 2.0 ** -149, 1e-8, 65504.0, 65520.0], np.float32)
    return np.concatenate([spec, -spec, x, (rng.standard_normal(n) * 10).astype(np.float32)])


def test_readme_example():
    # The five lines of the README's Python example, and the output it shows.
    x = np.array([1e-8, 0.1, 465.0], np.float32)
    y = lplab.convert(x, "float8_e4m3fn", overflow="saturate")
    assert y.codes.tolist() == [0x00, 0x1D, 0x7E]
    assert y.numpy().tolist() == [0.0, 0.1015625, 448.0]
    b, flags = lplab.convert(x, "bf16", flags=True)
    assert b.numpy().tolist() == [np.float32(1.0011717677116394e-08), 0.10009765625, 464.0]
    assert flags == {"inexact": 3, "underflow": 0, "overflow": 0, "invalid": 0}


@needs_ml_dtypes
@pytest.mark.parametrize("fmt", NARROW)
def test_every_code_decodes_as_ml_dtypes(fmt):
    t = theirs(fmt)
    if t is None:
        pytest.skip(f"ml_dtypes has no {fmt}")
    a = all_codes(fmt)
    ours = a.numpy()
    ref = a.to_ml_dtypes().astype(np.float32)
    assert same_values(ours, ref).all()
    assert same_values(lplab.decode(a, dtype=np.float64), ref).all()


@needs_ml_dtypes
@pytest.mark.parametrize("fmt", NARROW_FLOATS)
def test_float32_to_format_as_ml_dtypes(fmt):
    t = theirs(fmt)
    if t is None:
        pytest.skip(f"ml_dtypes has no {fmt}")
    x = sample()
    info = lplab.finfo(fmt)
    keep = np.ones(x.size, bool)
    if not info.has_nan:  # docs/ml-dtypes.md, 5: NaN into FP6/FP4
        keep &= ~np.isnan(x)
    if fmt == "float8_e8m0fnu":  # docs/ml-dtypes.md, 1: ml_dtypes rounds as if E8M0 had subnormals
        keep &= ~(np.abs(x) < 2.0 ** -127 * 1.5)
    with np.errstate(all="ignore"):
        ref = x.astype(t)
    ours = lplab.convert(x, fmt)
    assert same_values(ours.numpy()[keep], ref.astype(np.float32)[keep]).all()
    # Not NaN: the same code, bit for bit (NaN payloads may differ: docs/ml-dtypes.md, 4).
    num = keep & ~np.isnan(ref.astype(np.float32))
    assert (ours.codes[num] == codes_view(ref)[num]).all()


@pytest.mark.parametrize("fmt", NARROW)
@pytest.mark.parametrize("overflow", ["ieee", "saturate"])
def test_simd_kernels_equal_the_scalar_core(fmt, overflow):
    # float32 input runs the SIMD kernels; float64 input the scalar core
    # (FormatEntry::from_double), element by element: bit-identical, flags too.
    x = sample(20_000, seed=2)
    for r in ROUNDINGS:
        fast, ff = lplab.convert(x, fmt, round=r, overflow=overflow, seed=7, flags=True)
        slow, fs = lplab.convert(x.astype(np.float64), fmt, round=r, overflow=overflow, seed=7, flags=True)
        assert (fast.codes == slow.codes).all(), r
        assert ff == fs, r


def test_stochastic_rounding_across_chunks():
    # 5M elements: the extension converts in chunks of 4M; element i keeps
    # the random bits of (seed, i), as one call of the C++ kernel gives.
    x = np.linspace(1, 2, 5_000_001, dtype=np.float32)
    whole = lplab.convert(x, "bf16", round="stochastic", seed=3)
    tail = lplab.convert(x.astype(np.float64)[-1000:], "bf16", round="stochastic", seed=3)
    head = lplab.convert(x.astype(np.float64)[:1000], "bf16", round="stochastic", seed=3)
    assert (whole.codes[:1000] == head.codes).all()
    # The scalar core indexes the slice from 0: the tail differs from the
    # whole unless the bits follow the index (they do, with seed, i).
    assert not (whole.codes[-1000:] == tail.codes).all()
    up = (whole.numpy() > x).mean()
    assert 0.45 < up < 0.55  # rounds up about half the time for uniform fractions


@pytest.mark.parametrize("r", ROUNDINGS)
def test_strided_views_equal_contiguous(r):
    x = sample(30_000, seed=4)[: 200 * 150].reshape(200, 150)
    for view in (x.T, x[::3, 1::2], x[:, 7]):
        got = lplab.convert(view, "e5m2", round=r, seed=11)
        want = lplab.convert(np.ascontiguousarray(view), "e5m2", round=r, seed=11)
        assert got.shape == view.shape
        assert (got.codes == want.codes).all()
        # and with flags (the gathered path)
        g2, f2 = lplab.convert(view, "e5m2", round=r, seed=11, flags=True)
        w2, fw = lplab.convert(np.ascontiguousarray(view), "e5m2", round=r, seed=11, flags=True)
        assert (g2.codes == w2.codes).all() and f2 == fw


@pytest.mark.skipif(built("tests/convert_codes", "LPLAB_CONVERT_CODES") is None,
                    reason="the C++ converter (build/release/tests/convert_codes) is not built")
@pytest.mark.parametrize("fmt", FORMATS)
def test_equal_to_the_cxx_api(fmt):
    # lplab::kernels::convert called from C++ (tests/python/convert_codes.cpp).
    x = sample(50_000, seed=5)
    out = subprocess.run([built("tests/convert_codes", "LPLAB_CONVERT_CODES"), fmt], input=x.tobytes(),
                         capture_output=True, check=True).stdout
    ours = lplab.encode(x, fmt)
    assert out == np.ascontiguousarray(ours).tobytes()


def test_flags_count_each_event():
    x = np.array([1e-8, 1e5, np.nan, 1.0, -1e-30], np.float32)
    _, f = lplab.convert(x, "float16", flags=True)
    assert f == {"inexact": 3, "underflow": 2, "overflow": 1, "invalid": 0}
    _, f = lplab.convert(np.array([np.nan, 1.0], np.float32), "e2m1", flags=True)
    assert f["invalid"] == 1  # FP4 has no NaN


@pytest.mark.parametrize("round", ROUNDINGS)
def test_underflow_is_tiny_and_inexact(round):
    # IEEE 754-2019 7.5 (default handling): underflow only where the result is
    # tiny and inexact. Exact subnormal results and zeros raise no flag, in the
    # bulk kernels (float32 in), the scalar core (float64 in) and a declared format.
    none = {"inexact": 0, "underflow": 0, "overflow": 0, "invalid": 0}
    exact = {"float16": [2.0 ** -24, -2.0 ** -24, 1023 * 2.0 ** -24, 0.0, -0.0],
             "float8_e4m3fn": [2.0 ** -9, -7 * 2.0 ** -9, 0.0],
             "float8_e5m2": [2.0 ** -16, -3 * 2.0 ** -16],
             "float8_e8m0fnu": [2.0 ** -127],
             "e3m3:bias=3:fn": [2.0 ** -5, -3 * 2.0 ** -5]}
    for fmt, values in exact.items():
        for dtype in (np.float32, np.float64):
            x = np.array(values * 37, dtype)  # whole vectors and a tail
            y, f = lplab.convert(x, fmt, round=round, flags=True)
            assert f == none, (fmt, dtype)
            assert lplab.decode(y, dtype=np.float64).tolist() == x.astype(np.float64).tolist()
    # Tiny and inexact: 3 * 2^-26 is 0.75 of float16's smallest subnormal;
    # below 2^-127, E8M0 rounds or clamps up to 2^-127.
    for fmt, v in [("float16", 3 * 2.0 ** -26), ("float8_e4m3fn", 1.25 * 2.0 ** -9), ("float8_e8m0fnu", 2.0 ** -130)]:
        _, f = lplab.convert(np.full(37, v, np.float32), fmt, round=round, flags=True)
        assert f == {"inexact": 37, "underflow": 37, "overflow": 0, "invalid": 0}, fmt


def test_rounding_up_to_the_smallest_normal_is_not_tiny():
    _, f = lplab.convert(np.full(37, 2.0 ** -14 - 2.0 ** -26, np.float32), "float16", flags=True)
    assert f == {"inexact": 37, "underflow": 0, "overflow": 0, "invalid": 0}
    _, f = lplab.convert(np.full(37, 2.0 ** -14 - 2.0 ** -26, np.float32), "float16", round="toward_zero", flags=True)
    assert f == {"inexact": 37, "underflow": 37, "overflow": 0, "invalid": 0}


def test_policies_change_the_result():
    x = np.array([465.0, 1.0 + 2.0 ** -4, -(1.0 + 2.0 ** -4)], np.float32)
    assert np.isnan(lplab.convert(x, "e4m3").numpy()[0])
    assert lplab.convert(x, "e4m3", overflow="saturate").numpy()[0] == 448.0
    assert lplab.convert(x, "e4m3", round="upward").numpy()[1:].tolist() == [1.125, -1.0]
    assert lplab.convert(x, "e4m3", round="downward").numpy()[1:].tolist() == [1.0, -1.125]
    assert lplab.convert(x, "e4m3", round="nearest_away").numpy()[1:].tolist() == [1.125, -1.125]


@needs_ml_dtypes
def test_ml_dtypes_arrays_in_and_out_without_copies():
    import ml_dtypes
    x = np.array([[1.5, -2.25], [3.0, 1e-3]], np.float32)
    m = x.astype(ml_dtypes.bfloat16)
    y = lplab.convert(m.T, "float32")  # a strided ml_dtypes view
    assert y.tolist() == m.T.astype(np.float32).tolist()
    a = lplab.convert(x, "float8_e4m3fn")
    v = a.to_ml_dtypes()
    assert v.dtype == ml_dtypes.float8_e4m3fn and np.shares_memory(v, a.codes)
    assert (v.astype(np.float32) == a.numpy()).all()
    f4 = lplab.convert(x, "float4_e2m1fn").to_ml_dtypes()
    assert f4.astype(np.float32).tolist() == [[1.5, -2.0], [3.0, 0.0]]


def test_the_entry_reads_every_kind_of_array():
    # _lplab.convert reads a plain numpy dtype through the buffer protocol and
    # anything else (ml_dtypes' dtypes, read-only or foreign arrays) through
    # nanobind's ndarray: both give the C++ API's bits.
    import ml_dtypes
    from lplab import _lplab
    x = np.random.default_rng(3).standard_normal((7, 9)).astype(np.float32) * 50
    want = lplab.convert(np.ascontiguousarray(x), "e4m3").codes
    views = {"contiguous": x, "transposed": x.T.copy().T, "sliced": x[:, ::1],
             "float16": x.astype(np.float16).astype(np.float32)}
    for name, v in views.items():
        got = np.empty(v.shape, np.uint8)
        _lplab.convert(v, "", got, "float8_e4m3fn", "nearest_even", "ieee", 0, False, 1)
        assert (got == lplab.convert(np.ascontiguousarray(v), "e4m3").codes).all(), name
    step = x[:, ::2]  # strides of 2 elements
    assert (lplab.convert(step, "e4m3").codes == want[:, ::2]).all()
    half = x.astype(np.float16)  # format 'e'
    assert (lplab.convert(half, "e4m3").codes == lplab.convert(half.astype(np.float32), "e4m3").codes).all()
    codes = lplab.convert(x, "bf16").codes
    assert (lplab.convert(codes.view(ml_dtypes.bfloat16), "float32") ==
            lplab.convert(lplab.Array(codes, "bf16"), "float32")).all()
    scalar = np.array(1.5, np.float32)  # no dimensions
    assert float(lplab.convert(scalar, "bf16").numpy()) == 1.5
    ro = np.empty(x.shape, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="out"):
        _lplab.convert(x, "", ro, "float8_e4m3fn", "nearest_even", "ieee", 0, False, 1)
    with pytest.raises(TypeError, match="x"):
        _lplab.convert([1.0], "", np.empty(1, np.uint8), "float8_e4m3fn", "nearest_even", "ieee", 0, False, 1)
    with pytest.raises(ValueError, match="out"):
        _lplab.convert(x, "", np.empty(x.shape, np.uint16), "float8_e4m3fn", "nearest_even", "ieee", 0, False, 1)


@pytest.mark.parametrize("fmt", FORMATS + ["e3m3:bias=3:fn"])
def test_the_one_call_path_equals_the_general_one(fmt):
    # lplab.convert(x, to) on a numpy float array is one call of the
    # extension (_lplab.convert_new: numpy's C API, the kernel on the whole
    # array); with out= (or flags=) it takes the general path. Both must give
    # the same bits, class and format for every layout and input dtype.
    x = sample(6_000, seed=8)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    cases = {"float32": x, "float64": x.astype(np.float64) * (1 + 2.0 ** -40), "float16": half,
             "2-D": x[:6000].reshape(60, 100), "transposed": x[:6000].reshape(60, 100).T,
             "strided": x[::3], "0-d": np.array(x[25]), "empty": x[:0].reshape(0, 4),
             "byte-swapped": x.astype(">f4"), "subclass": np.asmatrix(x[:100])}
    for name, v in cases.items():  # the one call takes these, and leaves the others to the general path
        taken = lplab._lplab.convert_new(v, fmt, "nearest_even", "ieee", 0, 1) is not None
        assert taken == (name not in ("byte-swapped", "subclass")), name
    for r in ("nearest_even", "stochastic", "toward_zero"):
        for name, v in cases.items():
            got = lplab.convert(v, fmt, round=r, seed=5, overflow="saturate")
            want_dtype = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[lplab._lplab.storage_bits(fmt)]
            out = lplab.Array(np.empty(v.shape, want_dtype), fmt) if fmt != "float32" else np.empty(v.shape, np.float32)
            want = lplab.convert(v, fmt, round=r, seed=5, overflow="saturate", out=out)
            assert type(got) is type(want), name
            got_codes = got if fmt == "float32" else got.codes
            want_codes = want if fmt == "float32" else want.codes
            assert got_codes.shape == np.shape(v) and got_codes.dtype == want_codes.dtype, name
            assert got_codes.flags.c_contiguous, name
            assert np.asarray(got_codes).tobytes() == np.asarray(want_codes).tobytes(), (name, r)
            if fmt != "float32":
                assert got.format == lplab.format_name(fmt)
            if name == "byte-swapped":  # (both calls above took the general path: against the native array)
                native = lplab.convert(v.astype("=f4"), fmt, round=r, seed=5, overflow="saturate")
                native_codes = native if fmt == "float32" else native.codes
                assert np.asarray(got_codes).tobytes() == np.asarray(native_codes).tobytes(), r


def test_the_one_call_path_across_chunks_and_threads():
    # Past one chunk (2^22 elements: the stochastic bits of chunk 2 must
    # follow the whole array's index) and split between two threads.
    x = np.random.default_rng(2).standard_normal((1 << 22) + 300_001).astype(np.float32)
    for threads in (1, 2):
        got = lplab.convert(x, "e4m3", round="stochastic", seed=9, threads=threads)
        out = lplab.Array(np.empty(x.shape, np.uint8), "e4m3")
        lplab.convert(x, "e4m3", round="stochastic", seed=9, threads=threads, out=out)
        assert (got.codes == out.codes).all()


def test_the_one_call_path_refuses_as_the_general_one():
    x = np.ones(3, np.float32)
    for bad in ({"to": "fp9"}, {"to": "e4m3", "round": "sideways"}, {"to": "e4m3", "overflow": "wrap"}):
        kw = {"round": "nearest_even", "overflow": "ieee", **bad}
        with pytest.raises(ValueError) as fast:
            lplab.convert(x, **kw)
        with pytest.raises(ValueError) as general:
            lplab.convert(x, flags=True, **kw)
        assert str(fast.value) == str(general.value)


def test_dlpack_round_trip_with_numpy():
    a = lplab.convert(np.arange(6, dtype=np.float32).reshape(2, 3), "bf16")
    view = np.from_dlpack(a)
    assert view.dtype == np.uint16 and np.shares_memory(view, a.codes)
    b = lplab.Array(view, "bfloat16")
    assert b == a


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    t = torch.tensor([1.0, 2.5, -3.0, 1e-8], dtype=torch.bfloat16)
    assert lplab.convert(t, "float32").tolist() == t.float().tolist()
    codes = lplab.encode(t.float().numpy(), "bf16")
    back = torch.from_dlpack(lplab.Array(codes, "bf16"))
    assert back.view(torch.bfloat16).tolist() == t.tolist()


def test_pack_unpack():
    codes = lplab.Array(np.array([1, 2, 3], np.uint8), "float4_e2m1fn")
    packed = lplab.pack(codes)
    assert packed.tolist() == [0x21, 0x03]  # low nibble first, as CUDA's __nv_fp4x2
    assert lplab.unpack(packed, "e2m1", 3) == codes
    six = lplab.Array(np.array([1, 2, 3, 4], np.uint8), "float6_e2m3fn")
    assert lplab.pack(six).tolist() == [0x81, 0x30, 0x10]
    assert lplab.unpack(lplab.pack(six), "e2m3", 4) == six


def test_declared_formats():
    # E3M3, bias 3, fn: max 1.75 * 2^4 = 28, smallest subnormal 2^-5.
    x = np.array([1.0, 0.3, 100.0, 0.01], np.float32)
    y = lplab.convert(x, "e3m3:bias=3:fn", overflow="saturate")
    assert y.format == "e3m3:bias=3:fn"
    assert lplab.decode(y, dtype=np.float64).tolist() == [1.0, 0.3125, 28.0, 0.0]
    assert np.isnan(lplab.convert(x, "e3m3:bias=3:fn").numpy(np.float64)[2])


@pytest.mark.parametrize("bad, message", [
    (lambda: lplab.convert([1.0], "float9"), "unknown format 'float9'"),
    (lambda: lplab.convert([1.0], "fp8"), "group"),
    (lambda: lplab.convert(np.zeros(3, np.complex64), "bf16"), "complex64"),
    (lambda: lplab.convert(np.zeros(3, np.uint16), "bf16"), "need their format"),
    (lambda: lplab.convert(np.zeros(4, np.float32)[::-1], "bf16"), "negative strides"),
    (lambda: lplab.convert([1.0], "bf16", round="nearest"), "nearest"),
    (lambda: lplab.convert([1.0], "bf16", overflow="clip"), "clip"),
    (lambda: lplab.Array(np.zeros(3, np.uint16), "e4m3"), "uint8"),
    (lambda: lplab.convert(lplab.Array(np.zeros(2, np.uint8), "e4m3"), "bf16", format="e5m2"), "not e5m2"),
    (lambda: lplab.pack(lplab.Array(np.zeros(2, np.uint8), "e4m3")), "not packed"),
    (lambda: lplab.unpack(np.zeros(3, np.uint8), "e2m1", 3), "take 2 bytes"),
    (lambda: lplab.convert(np.array(["a"]), "bf16"), "not float32"),
    (lambda: lplab.decode(lplab.convert([1.0], "bf16"), dtype=np.float16), "float32 or float64"),
    (lambda: lplab.Array(np.arange(3, dtype=np.int32), "float32"), "float32 codes are float32"),
    (lambda: lplab.convert(np.ones(4, np.float32), "bf16", out=np.empty(3, np.uint16)), "shape"),
    (lambda: lplab.convert(np.ones(4, np.float32), "bf16", out=np.empty(4, np.uint8)), "uint16"),
])
def test_bad_input_raises_value_error(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_error_message_is_the_tools():
    tool = built("tools/lplab", "LPLAB_TOOL")
    if tool is None:
        pytest.skip("the lplab tool is not built")
    p = subprocess.run([tool, "finfo", "float9"], capture_output=True, text=True)
    line = p.stderr.strip()
    assert p.returncode == 2 and line.startswith("lplab: error: ")
    with pytest.raises(ValueError) as e:
        lplab.finfo("float9")
    assert str(e.value) == line[len("lplab: error: "):]


def test_ctrl_c_interrupts_a_long_conversion(python_sigint):
    x = np.ones(1 << 25)  # float64: the scalar core, ~1 s; chunks of 256K
    timer = threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        lplab.convert(x, "e4m3")
    timer.join()
