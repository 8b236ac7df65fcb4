#!/usr/bin/env python3
"""Writes the committed seed corpora, fuzz/corpus/<target>/ (re-run it after
changing a seed; scripts/fuzz.sh only reads them). Standard library only."""
import hashlib
import pathlib
import struct

root = pathlib.Path(__file__).resolve().parent / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = root / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


# 1. fuzz_number: numbers in every spelling parse_number meets, broken ones,
#    policy names, and NAME=VALUE parameter sets.
for s in ["0", "-0", "1", "0.1", "1e-3", "1E+6", "0x1p-3", "-0x1.8p+4", "inf", "-inf", "nan",
          "-nan", "infinity", "1e400", "1e-400", "4.9e-324", "2.2250738585072014e-308",
          "1.7976931348623157e308", "1_000", "1,5", "1e", "0x", "--", " 1", "1 ", "+.5", ".",
          "nan(123)", "0x1.fffffffffffffp1023", "12345678901234567890", "",
          "nearest_even", "rne", "sr", "stochastic", "toward_zero", "upward", "rd",
          "ieee", "saturate", "satfinite",
          "n=64\ntol=0.5\nmode=exact\nsizes=1,2,65536\nops=add, mul",
          "n=1e6\ntol=0\nsizes= 16 ,32", "n=1.5", "n=0", "n=-1", "n=1e30", "n=nan", "tol=inf",
          "tol=0x1p-10", "mode=slow", "sizes=1,,2", "sizes=", "ops=fma,div", "bogus=1",
          "n= 7 \nops=mul"]:
    put("fuzz_number", s)


# 2. fuzz_npy: valid files of each dtype, byte order and layout, and broken
#    framing, headers and sizes.
def npy(descr, shape, data, fortran=False, major=1, pad=True, dict_text=None):
    text = dict_text if dict_text is not None else \
        "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
            descr, "True" if fortran else "False",
            "(%s)" % "".join("%d, " % d for d in shape) if len(shape) != 1 else "(%d,)" % shape[0])
    lenb = 2 if major == 1 else 4
    if pad:
        total = 6 + 2 + lenb + len(text) + 1
        text += " " * ((-total) % 64)
    text += "\n"
    head = b"\x93NUMPY" + bytes([major, 0]) + len(text).to_bytes(lenb, "little") + text.encode("latin-1")
    return head + data


f32 = struct.pack("<6f", 1.0, -2.5, 3.0e38, 1e-45, float("inf"), float("nan"))
put("fuzz_npy", npy("<f4", (2, 3), f32))
put("fuzz_npy", npy("<f4", (2, 3), f32, fortran=True))
put("fuzz_npy", npy(">f4", (3, 2), struct.pack(">6f", 1, 2, 3, 4, 5, 6)))
put("fuzz_npy", npy("<f4", (6,), f32, major=2))
put("fuzz_npy", npy("<f4", (), struct.pack("<f", 0.5)))
put("fuzz_npy", npy("<f4", (0, 4), b""))
put("fuzz_npy", npy("<f4", (1, 2, 3), f32, fortran=True))
put("fuzz_npy", npy("<f2", (4,), struct.pack("<4e", 1, -0.0, 65504, 6e-8)))
put("fuzz_npy", npy(">f2", (2, 2), struct.pack(">4e", 1, 2, 3, 4), fortran=True))
put("fuzz_npy", npy("<f8", (3,), struct.pack("<3d", 0.1, -1e308, 5e-324)))
put("fuzz_npy", npy(">f8", (1, 1), struct.pack(">d", 2.0)))
put("fuzz_npy", npy("<f4", (2, 3), f32[:10]))                       # truncated data
put("fuzz_npy", npy("<f4", (2, 3), f32 + b"x"))                     # trailing byte
put("fuzz_npy", npy("<i4", (2,), b"\0" * 8))                        # integer dtype
put("fuzz_npy", npy("<f4", (2,), b"\0" * 8, dict_text="{'descr': '<f4', 'shape': (a,)}"))
put("fuzz_npy", npy("<f4", (2,), b"\0" * 8, dict_text=""))
put("fuzz_npy", npy("<f4", (2,), b"\0" * 8, dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"))
put("fuzz_npy", npy("<f4", (2,), b"\0" * 8, dict_text="{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 0), }"))
put("fuzz_npy", npy("<f4", (200,), b"\0" * 800, pad=False))         # header length byte >= 128
put("fuzz_npy", b"\x93NUMPY\x03\x00\x10\x00{}")                     # version 3.0
put("fuzz_npy", b"\x93NUMPY\x01\x00\xff\xff{")                      # header past the end
put("fuzz_npy", b"\x93NUMPY\x01")
put("fuzz_npy", b"PK\x03\x04 not npy")

# 3. fuzz_convert: FuzzedDataProvider reads its choices from the end of the
#    input, each integer little-endian (its last byte most significant); the
#    values are read the same way, so they are written last-first too.
def convert_seed(fmt, rnd, sat, seed, first, target, from_double, values):
    items = [(fmt, 1), (rnd, 1), (sat, 1), (seed, 8), (first, 6), (target, 1), (from_double, 1)]
    items += [(struct.unpack("<Q", struct.pack("<d", v))[0], 8) if from_double else
              (struct.unpack("<I", struct.pack("<f", v))[0], 4) for v in values]
    return b"".join(v.to_bytes(n, "little") for v, n in reversed(items))


edge = [0.0, -0.0, 1.0, -1.0, 448.0, 464.0, 57344.0, 65504.0, 65520.0, 6e-8, 1e-45, 3.4e38,
        float("inf"), float("-inf"), float("nan"), 0.5, 1.5, 2.5, 0.1, 6.0, 7.5, 2.0 ** -127]
for fmt in range(11):
    for rnd in (0, 2, 5):
        put("fuzz_convert", convert_seed(fmt, rnd, fmt % 2, 12345 + fmt, fmt * 1000, fmt, 0, edge))
    put("fuzz_convert", convert_seed(fmt, 3, 1, 7, 0, 0, 1, edge + [1e300, -1e-300, 5e-324]))

# 4. fuzz_spec: the example specs, one check of each kind and metric, JSON,
#    and broken ones (unknown keys, wrong types, sizes, YAML syntax).
examples = pathlib.Path(__file__).resolve().parent.parent / "examples" / "regress"
for f in ("spec.yaml", "spec.json", "failing.yaml"):
    if (examples / f).exists():
        put("fuzz_spec", (examples / f).read_bytes())
for s in [
    "checks:\n  - name: a\n    matmul: {a: e4m3, accumulator: fp32, k: 64, seed: 1}\n    max_ulp: {max: 2}\n",
    "checks:\n  - name: b\n    matmul: {a: bf16, b: fp16, output: bf16, accumulator: bf16_dot2, m: 2, n: 3, k: 5, seed: 0, round: sr}\n    norm_rel_err: {max: 0x1p-8}\n",
    "checks:\n  - name: c\n    matmul: {a: float8_e5m2, accumulator: tensor_core, k: 256, seed: 2, promote_every: 32, tc_fraction_bits: 13, distribution: half_normal}\n    sqnr_db: {min: 30}\n",
    "checks:\n  - name: d\n    quantize: {scheme: nvfp4, input: {distribution: lognormal, sigma: 1, shape: 2, n: 1024, seed: 5}}\n    max_rel_err: {max: 0.5}\n",
    "checks:\n  - name: e\n    convert: {format: e2m1, round: stochastic, seed: 9, overflow: satfinite, input: {distribution: uniform, low: -6, high: 6, n: 100, seed: 1}}\n    mismatch_fraction: {max: 0}\n",
    "checks:\n  - name: f\n    compare: {actual: a.npy, expected: {distribution: half_normal, n: 3, seed: 4}}\n    assert_close: {dtype: float16, rtol: 1e-3, atol: 1e-5, equal_nan: true}\n",
    "checks:\n  - name: g\n    convert: {format: e8m0, input: x.npy}\n    max_abs_err: {max: inf}\n",
    '{"checks": [{"name": "h", "convert": {"format": "float16", "input": {"distribution": "normal", "n": 8, "seed": 1}}, "underflow_fraction": {"max": 1e-6}}]}',
    "checks: []\n", "", "checks:\n  - name: x\n", "chekcs: 1\n",
    "checks:\n  - name: y\n    matmul: {a: float32, accumulator: fp99, k: 0, seed: -1}\n    max_ulp: {}\n",
    "checks:\n  - name: z\n    matmul: {a: e4m3, accumulator: fp32, m: 100000, n: 100000, k: 100000, seed: 1}\n    max_ulp: {max: 1}\n",
    "checks:\n  - {name: dup, convert: {format: bf16, input: a.npy}, max_ulp: {max: 1}}\n  - {name: dup, convert: {format: bf16, input: a.npy}, max_ulp: {max: 1}}\n",
    "checks:\n  - name: w\n    convert: {format: bf16, input: a.npy}\n    max_rel_err: {max: 2^2000}\n",
    "checks: [{name: [1, 2]}]", "checks:\n  - name: v\n\tconvert: {}\n", "{{{{", "checks: &a [*a]\n",
    "checks:\n  - name: 'q\\nr'\n    convert: {format: bf16, input: a.npy}\n    bogus: 1\n",
]:
    put("fuzz_spec", s)
