#!/usr/bin/env python3
"""Golden vectors for lplab's Four Over Six (kernels/four_over_six.h), from
fouroversix 1.0.5's PyTorch reference (quantize/pytorch/reference.py,
quantize_to_fp4 with pack_values=False).

Runs in a development environment with torch and the fouroversix sources;
CI never runs it, it reads the file this writes:

    python3 -m venv build/devenv
    build/devenv/bin/pip install torch numpy
    build/devenv/bin/pip download fouroversix==1.0.5 --no-deps --no-binary :all: -d build/fos
    tar -xzf build/fos/fouroversix-1.0.5.tar.gz -C build/fos
    build/devenv/bin/python scripts/fouroversix-goldens.py build/fos/fouroversix-1.0.5/src \\
        tests/data/fouroversix/goldens.txt

(The package's __init__ imports its models, which need transformers; the
script loads the reference module alone.)

Every case is a rows x 64 float32 tensor, quantized under each metric (mse,
mae, abs_max): N(0,1) activations, heavy tails, a tensor whose amax sits in
one block (most blocks then get E4M3 subnormal scales), blocks of one
repeated value, blocks of values on E2M1's midpoints, a zero tensor, and
blocks spanning 2^-20 .. 2^20. The file is text, one record per line:

    case NAME METRIC ROWS COLS AMAX_BITS
    x HEX32 ...          (the input, row-major)
    q HEXDIGIT...        (E2M1 codes, one hex digit each; '?' where the
                          reference's value is no E2M1 value)
    s HEX8 ...           (E4M3 scale codes, one per block of 16)
    v FLOAT_HEX32 ...    (the reference's fake-quantized values, as float32 bits)
    u BLOCK ...          (blocks where either candidate's scaled values, rounded
                          by the reference, leave E2M1's range: 8 or 10 -- the
                          reference clamps nothing -- so its choice there is
                          not the format's; may be empty)
"""
import math
import struct
import sys
import types

import torch


def load_reference(src):
    # The reference module alone: stub packages in place of the heavy __init__s.
    for name, rel in [("fouroversix", ""), ("fouroversix.quantize", "/quantize"),
                      ("fouroversix.quantize.pytorch", "/quantize/pytorch")]:
        pkg = types.ModuleType(name)
        pkg.__path__ = [src + "/fouroversix" + rel]
        sys.modules[name] = pkg
    from fouroversix.quantize.pytorch import reference
    from fouroversix.utils import ScaleRule
    return reference, ScaleRule


E2M1 = {0.0: 0, 0.5: 1, 1.0: 2, 1.5: 3, 2.0: 4, 3.0: 5, 4.0: 6, 6.0: 7}


def code_of(v):
    m = abs(v)
    if m not in E2M1:
        return "?"
    return "%x" % (E2M1[m] | (8 if math.copysign(1.0, v) < 0 else 0))


def bits(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def cases():
    g = torch.Generator().manual_seed(2026)
    out = []
    out.append(("normal", torch.randn(16, 64, generator=g)))
    out.append(("normal_small", torch.randn(8, 64, generator=g) * 1e-3))
    heavy = torch.randn(16, 64, generator=g) * torch.exp(2 * torch.randn(16, 64, generator=g))
    out.append(("lognormal_tails", heavy))
    one_block = torch.randn(8, 64, generator=g) * 0.01
    one_block[3, 17] = 1000.0
    out.append(("amax_in_one_block", one_block))
    rep = torch.ones(4, 64)
    for r in range(4):
        for b in range(4):
            rep[r, 16 * b:16 * b + 16] = float(1 + r + 4 * b) * 0.37
    out.append(("repeated_values", rep))
    mid = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, 6.0,
                        -6.0] * 16).reshape(4, 64)
    out.append(("e2m1_midpoints", mid))
    out.append(("zeros", torch.zeros(2, 64)))
    spread = torch.tensor(([2.0 ** e for e in range(-20, 21)] + [-(2.0 ** e) for e in range(-20, 0)]) * 5,
                          dtype=torch.float32)[:256].reshape(4, 64)
    out.append(("wide_spread", spread))
    return out


def main():
    src, path = sys.argv[1], sys.argv[2]
    reference, ScaleRule = load_reference(src)
    lines = ["# fouroversix 1.0.5 quantize/pytorch/reference.py quantize_to_fp4 (pack_values=False,",
             "# use_blackwell_scale_layout=False), torch %s; written by scripts/fouroversix-goldens.py" % torch.__version__]
    for name, x in cases():
        x = x.to(torch.float32).contiguous()
        for metric in ("mse", "mae", "abs_max"):
            q, s, amax = reference.quantize_to_fp4(x, scale_rule=ScaleRule(metric), pack_values=False,
                                                  use_blackwell_scale_layout=False)
            vals = q.float().flatten().tolist()
            scales = s.view(torch.uint8).flatten().tolist()
            lines.append("case %s %s %d %d %08x" % (name, metric, x.shape[0], x.shape[1], bits(float(amax))))
            lines.append("x " + " ".join("%08x" % bits(v) for v in x.flatten().tolist()))
            lines.append("q " + "".join(code_of(v) for v in vals))
            lines.append("s " + " ".join("%02x" % v for v in scales))
            lines.append("v " + " ".join("%08x" % bits(v) for v in vals))
            xb = x.reshape(-1, 16).float()
            out_of_range = torch.zeros(xb.shape[0], dtype=torch.bool)
            for expansion in (None, 1.5):
                scaled, _ = reference.quantize_to_nvfp4(xb, amax, scale_rule=ScaleRule(metric),
                                                        scale_expansion_factor=expansion)
                fq = reference.fake_quantize_to_e2m1(scaled)
                out_of_range |= fq.abs().amax(dim=-1) > 6
            lines.append("u " + " ".join(str(i) for i in out_of_range.nonzero().flatten().tolist()))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
