#!/usr/bin/env python3
"""Golden vectors for lplab's matrix-unit presets, from MMA-Sim 2.1.1.

Runs in a development virtual environment that has `mmasim==2.1.1` (and the
torch it needs); CI never runs it, it reads the file this writes:

    python3 -m venv build/mmasim-venv
    build/mmasim-venv/bin/pip install mmasim==2.1.1 numpy
    build/mmasim-venv/bin/python scripts/mmasim-goldens.py tests/data/mmasim/goldens.bin

Every instruction MMA-Sim 2.1.1 models becomes one preset, named as
kernels/include/lplab/kernels/mma.h documents (and `lplab mma --list` lists).
For each preset the script chains three instructions over k, as a kernel
does (D of one is C of the next), on 16 x 16 outputs, and records D after
every instruction: 768 evaluations per preset. The operands are codes, drawn
per row of A and column of B from patterns that reach every part of the
model (the whole code space, NaN and infinities, subnormals, zeros beside the
largest values, wide exponent spreads, exact cancellation, values only at
group boundaries), and C takes zeros of both signs, subnormals, huge values,
infinities and NaN. Operands of the same types share one input set; outputs
that several presets share are stored once.

--seed S (default 2026) picks other inputs: the live test
(tests/kernels/mma_live.sh) writes a fresh file with a new seed and checks it.

File layout (little-endian): b"LPLABMMA", u32 version = 1; u32 count of input
sets, each: name (u16 length + bytes), u8 widths of A, B, C and scale codes
(bytes; 0: no scales), u32 m, n, K, scale block (0: none), then A (m x K),
B (K x n), C (m x n), scales of A (m x K/block) and of B (K/block x n), codes
row-major; u32 count of output blobs, each u32 byte count + bytes; u32 count
of presets, each: name (u16 + bytes), u32 input set, u32 blob, u32 k of one
instruction, u32 instructions chained; a blob holds D (m x n codes of D's
width) after each instruction.
"""
import argparse
import hashlib
import struct
import sys

import numpy as np
import torch
import mmasim
from mmasim.nv_ptx import MMA, MMABlockScale, WGMMA, TCGen05MMA, TCGen05MMABlockScale
from mmasim.nv_ptx import isa_mma, isa_wgmma, isa_tcgen05mma
from mmasim.amd import MFMA
from mmasim.amd import isa_mfma

M = N = 16
STEPS = 3

# Operand types: (bytes of a code, exponent bits, mantissa bits, bias,
# encoding) with encoding ieee (inf, NaNs), fn (no inf, NaN = S.1..1.1..1),
# fnuz (NaN = 0x80, no -0) or none (no specials).
TYPES = {
    "f64": (8, 11, 52, 1023, "ieee"),
    "f32": (4, 8, 23, 127, "ieee"),
    "tf32": (4, 8, 23, 127, "ieee"),  # fp32 codes; the instruction reads 19 bits
    "f16": (2, 5, 10, 15, "ieee"),
    "bf16": (2, 8, 7, 127, "ieee"),
    "e4m3": (1, 4, 3, 7, "fn"),
    "e5m2": (1, 5, 2, 15, "ieee"),
    "e3m2": (1, 3, 2, 3, "none"),
    "e2m3": (1, 2, 3, 1, "none"),
    "e2m1": (1, 2, 1, 1, "none"),
    "fp8": (1, 4, 3, 8, "fnuz"),  # AMD's names: E4M3FNUZ
    "bf8": (1, 5, 2, 16, "fnuz"),  # E5M2FNUZ
    "ue8m0": (1, 8, 0, 127, "e8m0"),
    "ue4m3": (1, 4, 3, 7, "fn"),
}
TORCH = {
    "f64": torch.float64, "f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
    "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
    "fp8": torch.float8_e4m3fnuz, "bf8": torch.float8_e5m2fnuz, "ue8m0": torch.float8_e8m0fnu,
    "ue4m3": torch.float8_e4m3fn,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
TORCH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class Codes:
    """Codes of one operand type, drawn from patterns."""

    def __init__(self, name, rng):
        self.name = name
        self.width, self.eb, self.mb, self.bias, self.enc = TYPES[name]
        self.bits = 1 + self.eb + self.mb if self.enc != "e8m0" else 8
        self.rng = rng

    def make(self, sign, exp, man):
        return (sign << (self.eb + self.mb)) | (exp << self.mb) | man

    def finite(self, n, exp_lo=0, exp_hi=None):
        """Random finite codes with exponent fields in [exp_lo, exp_hi]."""
        top = (1 << self.eb) - 1
        hi = top - 1 if self.enc == "ieee" else top
        hi = hi if exp_hi is None else min(exp_hi, hi)
        out = []
        for _ in range(n):
            while True:
                s = int(self.rng.integers(2))
                e = int(self.rng.integers(exp_lo, hi + 1))
                m = int(self.rng.integers(1 << self.mb)) if self.mb else 0
                c = self.make(s, e, m)
                if not self.is_special(c):
                    break
            out.append(c)
        return out

    def is_special(self, c):
        top = (1 << self.eb) - 1
        e = (c >> self.mb) & top
        m = c & ((1 << self.mb) - 1)
        if self.enc == "ieee":
            return e == top
        if self.enc == "fn":
            return e == top and m == (1 << self.mb) - 1
        if self.enc == "fnuz":
            return c == 0x80
        return False

    def specials(self):
        top = (1 << self.eb) - 1
        sign = 1 << (self.eb + self.mb)
        if self.enc == "ieee":
            return [self.make(0, top, 0), sign | self.make(0, top, 0), self.make(0, top, 1),
                    sign | self.make(0, top, (1 << self.mb) - 1)]
        if self.enc == "fn":
            return [self.make(0, top, (1 << self.mb) - 1), sign | self.make(0, top, (1 << self.mb) - 1)]
        if self.enc == "fnuz":
            return [0x80]
        return []

    def one(self):
        return self.make(0, self.bias, 0)

    def largest(self, sign=0):
        top = (1 << self.eb) - 1
        if self.enc == "ieee":
            return self.make(sign, top - 1, (1 << self.mb) - 1)
        if self.enc == "fn":
            return self.make(sign, top, (1 << self.mb) - 2)
        return self.make(sign, top, (1 << self.mb) - 1)

    def negate(self, c):
        if c & ((1 << (self.eb + self.mb)) - 1) == 0 and self.enc == "fnuz":
            return c  # no -0 in fnuz (and 0x80 is NaN)
        return c ^ (1 << (self.eb + self.mb))

    def zero(self, negative=False):
        return (1 << (self.eb + self.mb)) if negative and self.enc != "fnuz" else 0

    def vector(self, pattern, n):
        """n codes of one pattern (A's rows and B's columns take them in turn)."""
        r = self.rng
        top = (1 << self.eb) - 1
        p = pattern % 16
        if p == 0:  # the whole code space
            return [int(x) for x in r.integers(0, 1 << self.bits, n, dtype=np.uint64)]
        if p == 1:
            return self.finite(n)
        if p == 2:  # the largest binades
            return self.finite(n, max(top - 2, 0))
        if p == 3:  # subnormals and the smallest normals
            return self.finite(n, 0, 1)
        if p == 4:  # zeros of both signs beside one largest value
            v = [self.zero(bool(r.integers(2))) for _ in range(n)]
            v[int(r.integers(n))] = self.largest(int(r.integers(2)))
            return v
        if p == 5:  # values only at group boundaries (t = 0 or 7 mod 8)
            f = self.finite(n)
            return [f[t] if t % 8 in (0, 7) else 0 for t in range(n)]
        if p == 6:  # x, -x pairs: exact cancellation
            f = self.finite((n + 1) // 2)
            return [f[t // 2] if t % 2 == 0 else self.negate(f[t // 2]) for t in range(n)]
        if p == 7:  # one large pair that cancels, then small values
            small = self.finite(n, 0, max(1, top // 3))
            big = self.largest()
            small[0], small[min(1, n - 1)] = big, self.negate(big)
            return small
        if p == 8:
            return [self.one()] * n
        if p == 9:  # finite with NaN and infinities sprinkled
            f = self.finite(n)
            sp = self.specials()
            if sp:
                for t in range(n):
                    if r.random() < 0.08:
                        f[t] = sp[int(r.integers(len(sp)))]
            return f
        if p == 10:  # one value repeated
            return self.finite(1) * n
        if p == 11:  # descending binades: a wide spread inside one group
            return [self.make(int(r.integers(2)), max(top - 1 - t, 0) if self.enc == "ieee" else max(top - t, 0),
                              int(r.integers(1 << self.mb)) if self.mb else 0) for t in range(n)]
        if p == 12:  # values near 1
            return self.finite(n, max(self.bias - 2, 0), self.bias + 2)
        if p == 13:  # all -0 (or +0)
            return [self.zero(True)] * n
        if p == 14:  # alternating signs of one value
            f = self.finite(1)[0]
            return [f if t % 2 == 0 else self.negate(f) for t in range(n)]
        # 15: small binades (about 2^-(3/5 bias)) in alternate runs of 16, the
        # others zero: terms far below 1, beside whole groups of zeros, where
        # a zero term's exponent decides the grid.
        mid = max(1, self.bias - (3 * self.bias) // 5)
        f = self.finite(n, max(mid - 3, 0), mid + 3)
        return [f[t] if (t // 16) % 2 == 0 else self.zero() for t in range(n)]


def c_codes(name, rng, n, row):
    """C: every kind of value an accumulator register can hold; +0 on every
    fourth row, where the small patterns of A meet zeros."""
    c = Codes(name, rng)
    out = []
    for _ in range(n):
        u = rng.random()
        if u < 0.10 or row % 4 == 3:
            out.append(0)
        elif u < 0.15:
            out.append(c.zero(True))
        elif u < 0.25:
            out.append(c.finite(1, 0, 1)[0])
        elif u < 0.35:
            out.append(c.finite(1, (1 << c.eb) - 4)[0])
        elif u < 0.40:
            out.append(c.specials()[int(rng.integers(4))])
        elif u < 0.50:
            out.append(c.finite(1, c.bias - 12, c.bias + 12)[0])
        elif u < 0.70:  # far enough from the products to lose bits, near enough to keep some
            out.append(c.finite(1, max(c.bias - 45, 1), c.bias + 45)[0])
        else:
            out.append(c.finite(1)[0])
    return out


def scale_codes(name, rng, n, tiny=False):
    """Block scales; `tiny`: E8M0 scales near 2^-90, whose products put whole
    groups below the zero exponent."""
    out = []
    for _ in range(n):
        u = rng.random()
        if name == "ue8m0":
            if tiny:
                out.append(int(rng.integers(30, 50)))
            elif u < 0.03:
                out.append(0xFF)  # NaN
            elif u < 0.10:
                out.append(int(rng.choice([0, 1, 253, 254])))
            else:
                out.append(int(rng.integers(117, 138)))
        else:  # ue4m3: the sign bit set on some (the hardware ignores it)
            if u < 0.03:
                c = 0x7F  # NaN
            elif u < 0.08:
                c = 0  # a zero scale
            else:
                c = int(rng.integers(1, 0x7F))
            out.append(c | (0x80 if rng.random() < 0.2 else 0))
    return out


def as_torch(codes, name, shape):
    width = TYPES[name][0]
    a = np.array(codes, dtype=UINT[width]).reshape(shape)
    if name in ("e3m2", "e2m3", "e2m1"):
        return a  # kept as codes: each caller lays them out for its instruction
    t = torch.from_numpy(a.view({1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[width]).copy())
    return t.view(TORCH[name])


class InputSet:
    def __init__(self, key, rng):
        a, b, c, s, k, block, steps = key
        self.key = key
        self.a, self.b, self.c, self.s = a, b, c, s
        self.K = k * steps
        self.block = block
        ca, cb = Codes(a, rng), Codes(b, rng)
        self.A = [ca.vector(i, self.K) for i in range(M)]
        cols = [cb.vector(j + 3, self.K) for j in range(N)]
        self.B = [[cols[j][t] for j in range(N)] for t in range(self.K)]
        self.C = [c_codes(c, rng, N, i) for i in range(M)]
        if s:
            self.SA = [scale_codes(s, rng, self.K // block, i % 4 == 3) for i in range(M)]
            sb = [scale_codes(s, rng, self.K // block, j % 4 == 1) for j in range(N)]
            self.SB = [[sb[j][q] for j in range(N)] for q in range(self.K // block)]
        else:
            self.SA = self.SB = []

    def name(self):
        a, b, c, s, k, block, steps = self.key
        return f"{a}.{b}.{c}.{s or '-'}.k{k}x{steps}" + (f".block{block}" if block else "")

    def serialize(self):
        widths = [TYPES[x][0] for x in (self.a, self.b, self.c)] + [TYPES[self.s][0] if self.s else 0]
        out = bytearray()
        nm = self.name().encode()
        out += struct.pack("<H", len(nm)) + nm
        out += struct.pack("<4B", *widths)
        out += struct.pack("<4I", M, N, self.K, self.block)
        for rows, w in ((self.A, widths[0]), (self.B, widths[1]), (self.C, widths[2]),
                        (self.SA, widths[3]), (self.SB, widths[3])):
            for row in rows:
                out += np.array(row, dtype=UINT[w]).astype(f"<u{w}").tobytes()
        return bytes(out)


def fp4_packed(codes):
    """mxf4 / mxf4nvf4: two E2M1 codes per byte along k, the first in the high nibble."""
    a = np.asarray(codes, dtype=np.uint8)
    return torch.from_numpy((a[..., 0::2] << 4) | a[..., 1::2])


def run_chain(op, inp, preset):
    """D after each of STEPS instructions of k = preset's, chained through C."""
    kind, k = preset["kind"], preset["k"]
    A = np.array(inp.A, dtype=UINT[TYPES[inp.a][0]])
    B = np.array(inp.B, dtype=UINT[TYPES[inp.b][0]])
    C = as_torch([x for row in inp.C for x in row], inp.c, (M, N))
    outs = []
    for step in range(STEPS):
        sl = slice(step * k, (step + 1) * k)
        a, b = A[:, sl], B[sl, :]
        if preset.get("packed"):
            ta, tb = fp4_packed(a), fp4_packed(b.T).T.contiguous()
        else:
            ta = as_torch(a.reshape(-1).tolist(), inp.a, a.shape)
            tb = as_torch(b.reshape(-1).tolist(), inp.b, b.shape)
            if isinstance(ta, np.ndarray):
                ta = torch.from_numpy((ta << (2 if inp.a == "e2m1" else 0)).astype(np.uint8))
            if isinstance(tb, np.ndarray):
                tb = torch.from_numpy((tb << (2 if inp.b == "e2m1" else 0)).astype(np.uint8))
        if inp.s:
            nb = k // inp.block
            sa = np.array(inp.SA, dtype=np.uint8)[:, step * nb:(step + 1) * nb]
            sb = np.array(inp.SB, dtype=np.uint8)[step * nb:(step + 1) * nb, :]
            alpha = torch.from_numpy(sa.copy()).view(TORCH[inp.s])
            beta = torch.from_numpy(sb.copy()).view(TORCH[inp.s])
            C = op(ta, tb, C, alpha, beta)
        else:
            C = op(ta, tb, C)
        w = C.element_size()
        outs.append(C.contiguous().view(TORCH_INT[w]).numpy().astype(f"<i{w}").tobytes())
    return b"".join(outs)


ARCH = {"Volta": "volta", "Turing": "turing", "Ampere": "ampere", "Ada Lovelace": "ada",
        "Hopper": "hopper", "Blackwell": "blackwell", "RTX Blackwell": "rtx_blackwell"}


def presets():
    """Every instruction MMA-Sim 2.1.1 models, by lplab's name (mma.h)."""
    out = []
    # NVIDIA: (MMA-Sim's table, lplab's family, MMA-Sim's class, whether the
    # name leaves the shape out: wgmma's and tcgen05's m and n do not change
    # the numbers).
    families = [
        (isa_mma.mma_shape_and_type, "mma", MMA, False),
        (isa_mma.mma_block_scale_shape_and_type, "mma", MMABlockScale, False),
        (isa_wgmma.wgmma_shape_and_type, "wgmma", WGMMA, True),
        (isa_tcgen05mma.tcgen05mma_shape_and_type, "tcgen05", TCGen05MMA, True),
        (isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type, "tcgen05", TCGen05MMABlockScale, True),
    ]
    seen = set()
    for table, family, cls, no_shape in families:
        for arch, shapes in table.items():
            for st in shapes:
                q = st.replace("kind::", "").split(".")
                name = f"{ARCH[arch]}.{family}.{'.'.join(q[1:] if no_shape else q)}"
                if name in seen:
                    continue
                seen.add(name)
                k = isa_mma.nv_shape_to_mnk(q[0])[2]
                # After the shape: the kind (where the PTX names one), the
                # block size (block-scaled), D, A, B, C (mma only), the scale type.
                rest = q[1:]
                kind = rest.pop(0) if "kind::" in st else None
                block = int(rest.pop(0)[5:]) if rest and rest[0].startswith("block") else 0
                s = rest.pop() if block else None
                d, a, b = rest[:3]
                c = rest[3] if len(rest) > 3 else d
                out.append(dict(name=name, make=lambda cls=cls, arch=arch, st=st: cls(arch, st), a=a, b=b, c=c, d=d,
                                s=s, k=k, block=block, kind=family, packed=kind in ("mxf4", "mxf4nvf4")))
    for arch, suffixes in isa_mfma.arch_mfma_suffix.items():
        for sfx in suffixes:
            op = MFMA(arch, sfx)
            name = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
                    torch.float8_e4m3fnuz: "fp8", torch.float8_e5m2fnuz: "bf8"}
            xf32 = sfx.endswith("xf32")
            out.append(dict(name=f"{arch.lower()}.mfma.{sfx}", make=lambda arch=arch, sfx=sfx: MFMA(arch, sfx),
                            a="tf32" if xf32 else name[op.a_type], b="tf32" if xf32 else name[op.b_type],
                            c=name[op.c_type], d=name[op.d_type], s=None, k=op.k, block=0, kind="mfma"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--only", default="", help="presets whose name contains this (a quick check)")
    args = ap.parse_args()
    assert mmasim.__name__ == "mmasim"
    from importlib.metadata import version
    if version("mmasim") != "2.1.1":
        sys.exit(f"mmasim-goldens: MMA-Sim {version('mmasim')} found; the goldens are of 2.1.1")
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    inputs, input_index, blobs, blob_index, rows = [], {}, [], {}, []
    for p in presets():
        if args.only not in p["name"]:
            continue
        key = (p["a"], p["b"], p["c"], p["s"], p["k"], p["block"], STEPS)
        if key not in input_index:
            input_index[key] = len(inputs)
            inputs.append(InputSet(key, rng))
        inp = inputs[input_index[key]]
        out = run_chain(p["make"](), inp, p)
        h = hashlib.sha256(out).digest()
        if h not in blob_index:
            blob_index[h] = len(blobs)
            blobs.append(out)
        rows.append((p["name"], input_index[key], blob_index[h], p["k"], STEPS))
    data = bytearray(b"LPLABMMA" + struct.pack("<I", 1))
    data += struct.pack("<I", len(inputs))
    for inp in inputs:
        data += inp.serialize()
    data += struct.pack("<I", len(blobs))
    for b in blobs:
        data += struct.pack("<I", len(b)) + b
    data += struct.pack("<I", len(rows))
    for name, i, b, k, steps in rows:
        nm = name.encode()
        data += struct.pack("<H", len(nm)) + nm + struct.pack("<4I", i, b, k, steps)
    with open(args.out + ".tmp", "wb") as f:
        f.write(data)
    import os
    os.replace(args.out + ".tmp", args.out)
    print(f"{len(rows)} presets, {len(rows) * STEPS * M * N} evaluations, {len(inputs)} input sets, "
          f"{len(blobs)} distinct outputs, {len(data)} bytes -> {args.out}")


if __name__ == "__main__":
    main()
