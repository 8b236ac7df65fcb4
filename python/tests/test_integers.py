"""The integer formats (int8, uint8, int4, uint4, int2, uint2, int1, uint1)
against ml_dtypes 0.6 and numpy: every code's value; float32 -> integer on a
decision-covering set (every integer of [-300, 300], the halves between them
and the floats either side of each, powers of two to 2^127, zeros,
infinities, NaN) under ml_dtypes' own astype rule (lplab: round toward_zero,
overflow wrap) and under every rounding with saturation against numpy's
rint/floor/ceil/trunc in float64; interop both ways."""
import numpy as np
import pytest

import lplab

ml_dtypes = pytest.importorskip("ml_dtypes")

INTEGERS = {  # name: (bits, signed)
    "int8": (8, True), "uint8": (8, False), "int4": (4, True), "uint4": (4, False),
    "int2": (2, True), "uint2": (2, False), "int1": (1, True), "uint1": (1, False),
}


def their_type(name):
    return np.dtype(name) if name in ("int8", "uint8") else np.dtype(getattr(ml_dtypes, name))


def decision_inputs():
    k = np.arange(-300, 301, dtype=np.float32)
    halves = k + np.float32(0.5)
    around = np.concatenate([k, halves, k + np.float32(0.25), k + np.float32(0.75)])
    around = np.concatenate([around, np.nextafter(around, np.float32(-np.inf)), np.nextafter(around, np.float32(np.inf))])
    powers = np.ldexp(np.float32(1), np.arange(-149, 128)).astype(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**31, -2.0**31, 2.0**32, 3e9, -3e9,
                        np.finfo(np.float32).max, -np.finfo(np.float32).max], dtype=np.float32)
    rng = np.random.default_rng(46)
    return np.concatenate([around, powers, -powers, special, rng.normal(0, 100, 5000).astype(np.float32)])


def codes(a):
    """An Array's codes, masked to the format's width."""
    bits = INTEGERS[a.format][0]
    return a.codes & np.uint8((1 << bits) - 1)


def their_codes(x, name):
    """ml_dtypes'/numpy's codes of an array of their type, masked to the width."""
    bits = INTEGERS[name][0]
    return x.view(np.uint8) & np.uint8((1 << bits) - 1)


@pytest.mark.parametrize("name", INTEGERS)
def test_every_code_has_their_value(name):
    bits, _ = INTEGERS[name]
    c = np.arange(1 << bits, dtype=np.uint8)
    ours = lplab.decode(lplab.Array(c, name), dtype=np.float64)
    theirs = c.view(their_type(name)).astype(np.float64)
    np.testing.assert_array_equal(ours, theirs)
    # The upper bits of a byte are ignored, as ml_dtypes ignores them.
    high = c | np.uint8(0xFF ^ ((1 << bits) - 1))
    np.testing.assert_array_equal(lplab.decode(lplab.Array(high, name), dtype=np.float64), theirs)


@pytest.mark.parametrize("name", INTEGERS)
def test_astype_is_toward_zero_with_wrap(name):
    x = decision_inputs()
    with np.errstate(invalid="ignore", over="ignore"):
        if name in ("int8", "uint8"):
            # numpy's float -> int8/uint8 is C's conversion: defined only where the
            # truncated value fits (elsewhere it depends on the machine).
            t = np.trunc(x.astype(np.float64))
            lo, hi = (-128, 127) if name == "int8" else (0, 255)
            x = x[np.isfinite(x) & (t >= lo) & (t <= hi)]
        theirs = their_codes(x.astype(their_type(name)), name)
    ours = codes(lplab.convert(x, name, round="toward_zero", overflow="wrap"))
    bad = np.flatnonzero(ours != theirs)
    assert bad.size == 0, f"{name}: {bad.size} differ, first x={x[bad[0]]!r} lplab {ours[bad[0]]} theirs {theirs[bad[0]]}"
    assert x.size > 1000


ROUNDINGS = {
    "nearest_even": np.rint,
    "nearest_away": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
    "toward_zero": np.trunc,
    "upward": np.ceil,
    "downward": np.floor,
}


@pytest.mark.parametrize("rounding", ROUNDINGS)
@pytest.mark.parametrize("name", INTEGERS)
def test_every_rounding_saturated_against_numpy(name, rounding):
    bits, signed = INTEGERS[name]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    x = decision_inputs()
    v = ROUNDINGS[rounding](x.astype(np.float64))
    v = np.where(np.isnan(v), 0, np.clip(v, lo, hi)).astype(np.int64)
    want = (v & ((1 << bits) - 1)).astype(np.uint8)
    for overflow in ("saturate", "ieee"):
        got = codes(lplab.convert(x, name, round=rounding, overflow=overflow))
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{name} {rounding} {overflow}: first x={x[bad[0]]!r} lplab {got[bad[0]]} numpy {want[bad[0]]}"


def test_wrap_is_refused_for_floating_point_formats():
    with pytest.raises(ValueError, match="not an integer format"):
        lplab.convert(np.ones(4, np.float32), "float8_e4m3fn", overflow="wrap")


@pytest.mark.parametrize("name", INTEGERS)
def test_interop_both_ways(name):
    bits, _ = INTEGERS[name]
    c = np.arange(1 << bits, dtype=np.uint8)
    theirs = c.view(their_type(name))
    # Theirs in: an ml_dtypes (or numpy int8/uint8) array names its format.
    a = lplab.convert(theirs, "float32")
    np.testing.assert_array_equal(a, theirs.astype(np.float32))
    # Ours out: the same bits as their dtype.
    ours = lplab.convert(theirs.astype(np.float32), name)
    assert ours.format == name
    out = lplab.to_ml_dtypes(ours)
    assert out.dtype == their_type(name)
    np.testing.assert_array_equal(out.astype(np.float64), theirs.astype(np.float64))


@pytest.mark.parametrize("name", INTEGERS)
def test_finfo_gives_iinfo_range(name):
    info = lplab.finfo(name)
    theirs = np.iinfo(name) if name in ("int8", "uint8") else ml_dtypes.iinfo(getattr(ml_dtypes, name))
    assert (info.min, info.max, info.bits) == (theirs.min, theirs.max, theirs.bits)
    assert info.encoding == "integer"
    ii = lplab.iinfo(name)
    assert (ii.kind, ii.bits, ii.min, ii.max) == (theirs.kind, theirs.bits, theirs.min, theirs.max)
    assert repr(ii) == f"iinfo(min={theirs.min}, max={theirs.max}, dtype={name})"


def test_iinfo_refuses_a_floating_point_format():
    with pytest.raises(ValueError, match="not an integer format"):
        lplab.iinfo("bfloat16")


def test_packed_int4_puts_element_0_in_the_low_nibble():
    # ONNX's INT4 ("the first element is stored in the 4 LSB"), CUTLASS's
    # int4b_t arrays; int2 four to a byte, element 0 lowest.
    a = lplab.convert(np.array([1, -2, 3], np.float32), "int4")
    np.testing.assert_array_equal(lplab.pack(a), np.array([0xE1, 0x03], np.uint8))
    np.testing.assert_array_equal(lplab.unpack(lplab.pack(a), "int4", 3).numpy(), [1, -2, 3])
    b = lplab.convert(np.array([1, -2, -1, 0, 1], np.float32), "int2")
    np.testing.assert_array_equal(lplab.pack(b), np.array([0b00111001, 0b01], np.uint8))
