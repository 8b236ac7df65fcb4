"""lplab: what fp16, bf16, fp8, fp6, fp4 and MX/NVFP4 scaling do to your numbers.

Every function runs lplab's compiled kernels (the C++ library, SIMD chosen
for this CPU at run time) and gives the same bits as the C++ API. Formats are
named as lplab, PyTorch and ml_dtypes name them ("bfloat16", "bf16",
"float8_e4m3fn", "e4m3", ...) or by a layout ("e3m3:bias=3:fn").

    >>> import numpy as np, lplab
    >>> x = np.array([1e-8, 0.1, 465.0], np.float32)
    >>> lplab.convert(x, "float8_e4m3fn", overflow="saturate").numpy()
    array([  0.    ,   0.1015625, 448.    ], dtype=float32)

Errors are ValueError with the message the ``lplab`` tool prints; Ctrl-C
stops long calls (KeyboardInterrupt). docs/python.md has the guide.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import _lplab
from ._arrays import Array, canonical as _canonical, decode, ml_dtypes_dtype, new_result as _new_result
from ._arrays import _CANONICAL as _NAMES, _CODE_DTYPES as _DTYPES, _code_dtype, operand as _operand, result as _result
from ._lab import Regression, Table, experiments, regress, report, run
from ._lplab import finfo

__version__ = _lplab.__version__

__all__ = [
    "Array", "Quantized", "Table", "Regression", "finfo", "iinfo", "formats", "format_name", "convert", "encode", "decode",
    "to_ml_dtypes", "ml_dtypes_dtype", "pack", "unpack", "block_schemes", "quantize", "dequantize",
    "integer_schemes", "IntegerQuantized", "quantize_integer", "to_checkpoint", "from_checkpoint", "smoothquant",
    "integer_mma_instructions", "integer_matmul",
    "swizzle_scales", "unswizzle_scales", "cvt_rs", "hadamard", "quantize_four_over_six", "dequantize_four_over_six",
    "recipes", "recipe",
    "quantize_tensor", "dequantize_tensor", "quantize_tiles", "dequantize_tiles", "map", "cast", "relu",
    "gelu_tanh", "gelu_erf", "square", "sqrt", "rsqrt", "pow", "scale", "add", "mul", "axpy", "triu", "sum",
    "mean", "amax", "matmul", "matmul_blocks", "accumulators", "experiments", "run", "report", "regress",
]

# The functions python/src binds as public (def_public: cpu_model,
# simd_target, ...) are the package's as they are.
for _name in _lplab._public:
    globals()[_name] = getattr(_lplab, _name)
    __all__.append(_name)
del _name

# Every enumeration's names, from its one declaration in C++: the docstrings
# below list them from here ({round}, {unary}, ...).
# (_NAMES, imported above, is the format names' cache; these are _ENUM_NAMES.)
_ENUM_NAMES = {kind: ", ".join(names) for kind, names in _lplab.enum_names().items()}
_ENUM_NAMES["scheme"] = ", ".join(_lplab.block_schemes())
_ENUM_NAMES["integer_scheme"] = ", ".join(_lplab.integer_schemes())


def _documented(f):
    f.__doc__ = f.__doc__.format(**_ENUM_NAMES)
    return f


_new_array = object.__new__
_convert_new = _lplab.convert_new
_ndarray = np.ndarray
_empty = np.empty


def formats() -> list[str]:
    """The catalog's formats, in order."""
    return [name for name, _ in _lplab.formats()]


def format_name(name: str) -> str:
    """The canonical name of a format ("bf16" -> "bfloat16")."""
    return _lplab.format_name(name)


class iinfo:
    """An integer format's range, as numpy.iinfo and ml_dtypes.iinfo give it:
    ``kind`` ("i" or "u"), ``bits``, ``min``, ``max``, ``dtype`` (the name).

    >>> lplab.iinfo("int4")
    iinfo(min=-8, max=7, dtype=int4)
    """

    __slots__ = ("kind", "bits", "min", "max", "dtype")

    def __init__(self, name: str):
        f = finfo(name)
        if f.encoding != "integer":
            raise ValueError(f"iinfo: {format_name(name)} is not an integer format (finfo describes it)")
        self.kind = "i" if f.is_signed else "u"
        self.bits = int(f.bits)
        self.min = int(f.min)
        self.max = int(f.max)
        self.dtype = format_name(name)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# ---------------------------------------------------------------------------
# Conversions


@_documented
def convert(x: Any, to: str, *, round: str = "nearest_even", overflow: str = "ieee", seed: int = 0,
            flags: bool = False, threads: int = 1, format: str | None = None, out: Any = None):
    """Rounds every element of ``x`` into format ``to``, once.

    round: one of {round} (default nearest_even; stochastic: element i takes
    the random bits of (seed, i), as the C++ kernels do); overflow: one of
    {overflow}. Returns an :class:`Array` (a
    numpy float32 array for ``to="float32"``), and with ``flags=True`` also
    the counts of elements that raised each IEEE flag (underflow: a tiny
    result that is also inexact, IEEE 754-2019 7.5, so an exact subnormal
    raises none)::

        y, f = lplab.convert(x, "e4m3", flags=True)   # f["overflow"], f["inexact"], ...

    ``out``: an Array of ``to`` (or a C-contiguous array of its codes) of x's
    shape to write into instead of a new one. ``threads``: 0 uses every core.
    """
    # The common case (a numpy float array into a new result) in one call of
    # the extension: the call whose overhead benchmarks/python_bench.py
    # measures. It gives None for an array it does not take.
    if type(x) is _ndarray and format is None:
        if out is None and not flags:
            y = _convert_new(x, to, round, overflow, seed, threads)
            if y is not None:
                return y
        if x.dtype.kind == "f" and x.dtype.isnative:
            arr, fmt = x, ""
        else:
            arr, fmt = _operand(x, format)
    else:
        arr, fmt = _operand(x, format)
    name = _NAMES.get(to) or _canonical(to)
    if out is None:
        dtype = _DTYPES.get(name)  # (a numpy dtype is falsy: no `or` here)
        codes = _empty(arr.shape, _code_dtype(name) if dtype is None else dtype)
    else:
        codes = _new_result(arr, name, out)
    counts = _lplab.convert(arr, fmt, codes, name, round, overflow, seed, flags, threads)
    if out is not None and isinstance(out, Array):
        y = out
    elif name == "float32":
        y = codes
    else:
        y = _new_array(Array)
        y.codes, y.format = codes, name
    return (y, counts) if flags else y


def encode(x: Any, format: str, **options) -> np.ndarray:
    """The codes of ``x`` rounded into ``format`` (unsigned integers; float32 values for float32)."""
    out = convert(x, format, **options)
    return out.codes if isinstance(out, Array) else out


def to_ml_dtypes(x: Array) -> np.ndarray:
    """An Array's bits as an ml_dtypes array, without a copy."""
    return x.to_ml_dtypes()


def pack(x: Any, format: str | None = None) -> np.ndarray:
    """FP4/FP6 codes packed as CUDA stores them (two E2M1 a byte, four FP6 in three bytes)."""
    arr, fmt = _operand(x, format)
    return _lplab.pack(arr, fmt)


def unpack(data: np.ndarray, format: str, n: int) -> Array:
    """n codes of an FP4/FP6 format from the bytes pack() wrote."""
    return Array(_lplab.unpack(np.asarray(data), format, n), format)


# ---------------------------------------------------------------------------
# Scaling


def block_schemes() -> dict:
    """The named block schemes: name -> (element, scale, block_size, rule,
    tensor_scale, block_rows); block_rows > 1 (nvfp4_2d, nvfp4_te_2d) quantizes
    matrices in blocks of block_rows x block_size."""
    return _lplab.block_schemes()


class Quantized:
    """A block-scaled tensor: element codes (or packed bytes), scale codes and
    the tensor scale, with the scheme that made them."""

    __slots__ = ("elems", "scales", "tensor_scale", "elem", "scale", "block_size", "rule", "uses_tensor_scale",
                 "packed", "shape", "block_rows", "rows")

    def __init__(self, elems, scales, tensor_scale, elem, scale, block_size, rule, uses_tensor_scale, packed, shape,
                 block_rows=1, rows=False):
        self.elems, self.scales, self.tensor_scale = elems, scales, tensor_scale
        self.elem, self.scale, self.block_size, self.rule = elem, scale, block_size, rule
        self.uses_tensor_scale, self.packed, self.shape = uses_tensor_scale, packed, tuple(shape)
        self.block_rows, self.rows = block_rows, rows

    @property
    def nbytes(self) -> int:
        """The storage the scheme needs: the elements packed (FP4 two a byte,
        FP6 four in three bytes, whether or not this object holds them
        packed), the scales, and 4 bytes for an fp32 tensor scale."""
        e = self.elems.nbytes if self.packed else _lplab.packed_bytes(self.elem, self.elems.size)
        return e + self.scales.codes.nbytes + (4 if self.uses_tensor_scale else 0)

    def dequantize(self) -> np.ndarray:
        return dequantize(self)

    def __repr__(self) -> str:
        return (f"lplab.Quantized({self.elem} x {self.scale}, block={self.block_rows}x{self.block_size}, rule={self.rule}, "
                f"shape={self.shape}, tensor_scale={self.tensor_scale!r}, packed={self.packed})")


@_documented
def quantize(x: Any, scheme: str | None = "mxfp8_e4m3", *, elem: str | None = None, scale: str | None = None,
             block_size: int | None = None, rule: str | None = None, tensor_scale: bool | None = None,
             packed: bool = False, threads: int = 1, block_rows: int | None = None, rows: bool = False,
             rounding: str = "nearest", seed: int = 0, subsequence: int = 0, stream: str = "philox",
             layout: str = "sm_100a") -> Quantized:
    """Block-scaled quantization of float32 values: a named scheme
    ({scheme})
    with any field replaced, or a scheme of your own (elem, scale, block_size,
    rule: one of {rule}). Blocks are runs of
    block_size consecutive elements in row-major order; with block_rows > 1
    (nvfp4_2d: 16 x 16) or rows=True, x is a matrix whose last dimension is a
    row, and a block is block_rows x block_size of it, restarting on each row,
    with one scale per block, row-major over blocks (docs/recipes.md).
    rounding="cvt_rs" rounds the elements as PTX's cvt.rs does (NVFP4
    training's gradients): each 4 consecutive elements one instruction with
    rbits from the stream ({rbits_stream}) at (seed, subsequence, group),
    split by the layout ("sm_100a", "sm_103a")."""
    if scheme is not None and scheme in _lplab.integer_schemes():
        return quantize_integer(x, scheme, elem=elem, scale=scale, rule=rule)
    if scheme is not None:
        schemes = _lplab.block_schemes()
        if scheme not in schemes:
            raise ValueError(f"unknown block scheme '{scheme}' ({', '.join(schemes)}; integer schemes: "
                             f"{', '.join(_lplab.integer_schemes())})")
        e0, s0, b0, r0, t0, h0 = schemes[scheme]
    else:
        e0, s0, b0, r0, t0, h0 = elem, scale, 32, "floor", False, 1
        if elem is None or scale is None:
            raise ValueError("quantize: name a scheme, or give elem and scale")
    e = _lplab.format_name(elem or e0)
    s = _lplab.format_name(scale or s0)
    b = b0 if block_size is None else block_size
    r = r0 if rule is None else rule
    t = t0 if tensor_scale is None else tensor_scale
    h = h0 if block_rows is None else block_rows
    arr, fmt = _operand(x)
    if rounding not in ("nearest", "cvt_rs"):
        raise ValueError(f"rounding: 'nearest' or 'cvt_rs', not {rounding!r}")
    elems, scales, ts = _lplab.quantize_blocks(arr, e, s, b, r, t, packed, threads, h, rows, rounding == "cvt_rs",
                                               seed, subsequence, stream, layout)
    shape = np.shape(arr)
    return Quantized(elems if packed else Array(elems, e), Array(scales, s), ts, e, s, b, r, t, packed, shape, h,
                     rows)


def dequantize(q: Quantized | IntegerQuantized) -> np.ndarray:
    """The float32 values of a :class:`Quantized` or :class:`IntegerQuantized` tensor, in its shape."""
    if isinstance(q, IntegerQuantized):
        zeros = None if q.zeros is None else q.zeros.codes
        return _lplab.dequantize_integer(q.codes.codes, q.scales.codes, zeros, q.elem, q.scale, q.rule, q.group_size,
                                         q.per_tensor, list(q.shape))
    elems = q.elems if q.packed else q.elems.codes
    return _lplab.dequantize_blocks(elems, q.scales.codes, q.elem, q.scale, q.block_size, q.rule,
                                    q.uses_tensor_scale, q.tensor_scale, q.packed, list(q.shape), q.block_rows,
                                    q.rows)


def integer_schemes() -> dict:
    """The named integer schemes: name -> (element, scale, rule, group_size,
    per_tensor); group_size 0 is one scale per row (the last dimension)."""
    return _lplab.integer_schemes()


class IntegerQuantized:
    """An integer-scaled tensor: element codes, one scale per group and, for
    the asymmetric rules, one zero point per group (element codes for gptq,
    awq and torchao_asymmetric; scale-format values for tinygemm). Groups run
    along the last dimension, row-major: entry r * ceil(cols / group_size) + c."""

    __slots__ = ("codes", "scales", "zeros", "elem", "scale", "rule", "group_size", "per_tensor", "shape")

    def __init__(self, codes, scales, zeros, elem, scale, rule, group_size, per_tensor, shape):
        self.codes, self.scales, self.zeros = codes, scales, zeros
        self.elem, self.scale, self.rule = elem, scale, rule
        self.group_size, self.per_tensor, self.shape = group_size, per_tensor, tuple(shape)

    @property
    def nbytes(self) -> int:
        """The storage the scheme needs: the codes packed (int4 two a byte),
        the scales and the zero points (integer ones packed as the codes)."""
        n = _lplab.packed_bytes(self.elem, self.codes.codes.size) + self.scales.codes.nbytes
        if self.zeros is not None:
            z = self.zeros.codes
            n += _lplab.packed_bytes(self.elem, z.size) if self.zeros.format == self.elem else z.nbytes
        return n

    def dequantize(self) -> np.ndarray:
        return dequantize(self)

    def __repr__(self) -> str:
        group = "tensor" if self.per_tensor else ("row" if self.group_size == 0 else self.group_size)
        return (f"lplab.IntegerQuantized({self.elem} x {self.scale}, rule={self.rule}, group={group}, "
                f"shape={self.shape})")


@_documented
def quantize_integer(x: Any, scheme: str | None = "int4_g128", *, elem: str | None = None,
                     scale: str | None = None, rule: str | None = None, group_size: int | None = None,
                     per_tensor: bool | None = None) -> IntegerQuantized:
    """Integer scaling of float32 values (kernels/integer_scaling.h): a named
    scheme ({integer_scheme}) with any field replaced, or one of your own
    (elem, scale and rule: one of {integer_rule}). Groups of group_size run
    along the last dimension (0: the whole row, per channel / per token);
    per_tensor=True is one group. ``lplab.quantize(x, "int4_g128")`` is the
    same call."""
    if scheme is not None:
        schemes = _lplab.integer_schemes()
        if scheme not in schemes:
            raise ValueError(f"unknown integer scheme '{scheme}' ({', '.join(schemes)})")
        e0, s0, r0, g0, t0 = schemes[scheme]
    else:
        if elem is None or scale is None or rule is None:
            raise ValueError("quantize_integer: name a scheme, or give elem, scale and rule")
        e0, s0, r0, g0, t0 = elem, scale, rule, 0, False
    e = _lplab.format_name(elem or e0)
    s = _lplab.format_name(scale or s0)
    r = rule or r0
    g = g0 if group_size is None else group_size
    t = t0 if per_tensor is None else per_tensor
    arr, _ = _operand(x)
    codes, scales, zeros = _lplab.quantize_integer(arr, e, s, r, g, t)
    zero_format = e if _lplab.integer_rule_zero(r) == "integer" else s
    return IntegerQuantized(Array(codes, e), Array(scales, s), None if zeros is None else Array(zeros, zero_format),
                            e, s, r, g, t, np.shape(arr))


@_documented
def to_checkpoint(q: IntegerQuantized, layout: str = "gptq") -> dict:
    """A 2-D weight (N out features x K in features, groups along K) as a
    checkpoint stores it ({checkpoint}): {{"qweight": int32, "qzeros":
    int32, "scales": Array (K/G x N)}}. gptq writes zero - 1 (AutoGPTQ's
    format) and refuses a zero point of 0; gptq_v2 (GPTQModel) writes it as
    it is; awq packs along N in the order 0 2 4 6 1 3 5 7 (4-bit only)."""
    if not isinstance(q, IntegerQuantized) or q.zeros is None or len(q.shape) != 2:
        raise ValueError("to_checkpoint: an IntegerQuantized 2-D weight with integer zero points (gptq, awq, "
                         "torchao_asymmetric)")
    qweight, qzeros, scales = _lplab.to_checkpoint(q.codes.codes.reshape(q.shape), q.scales.codes, q.zeros.codes,
                                                   q.elem, q.scale, q.rule, q.group_size, layout)
    return {"qweight": qweight, "qzeros": qzeros, "scales": Array(scales, q.scale)}


@_documented
def from_checkpoint(qweight: np.ndarray, qzeros: np.ndarray, scales: Any, layout: str = "gptq", *,
                    scheme: str = "int4_g128", group_size: int | None = None) -> IntegerQuantized:
    """The codes, scales and zero points of a checkpoint's tensors ({checkpoint};
    scales K/G x N, as lplab.Array or numpy float16), read with `scheme`'s
    element, scale format and rule and the checkpoint's group size."""
    e, s, r, g, _ = _lplab.integer_schemes()[scheme]
    g = g if group_size is None else group_size
    sc = scales.codes if isinstance(scales, Array) else np.asarray(scales)
    if sc.dtype == np.float16 and s == "float16":
        sc = sc.view(np.uint16)
    codes, sc_out, zeros = _lplab.from_checkpoint(np.ascontiguousarray(qweight, np.int32),
                                                  np.ascontiguousarray(qzeros, np.int32),
                                                  np.ascontiguousarray(sc), e, s, r, g, layout)
    return IntegerQuantized(Array(codes.reshape(-1), e), Array(sc_out, s), Array(zeros, e), e, s, r, g, False,
                            codes.shape)


def integer_mma_instructions() -> dict:
    """The integer matrix-unit presets (kernels/integer_mma.h): name -> (arch,
    isa, m, n, k, blocks, a, b, saturate); a and b are catalog formats
    (int8, uint8, int4, uint4)."""
    return _lplab.integer_mma_instructions()


def integer_matmul(a: Any, b: Any, instruction: str, *, c: Any = None) -> np.ndarray:
    """D = A B + C (int32) through an integer matrix unit: A m x k and B k x n
    of the preset's operand values (integers; lplab int8/int4 Arrays give
    theirs), C m x n int32 or None. Each output chains the instruction along
    k (zero-padded), D of one the C of the next; the sum of one instruction
    is exact, then wrapped mod 2^32 or, with .satfinite, clamped to int32."""
    def ints(v, name):
        if isinstance(v, Array):
            v = v.numpy()
        v = np.asarray(v)
        if v.dtype.kind == "f":
            if not np.all(np.isfinite(v)) or not np.all(v == np.round(v)):
                raise ValueError(f"integer_matmul: {name} holds values that are not integers")
        elif v.dtype.kind not in "iu":
            raise ValueError(f"integer_matmul: {name} must hold integers, not {v.dtype}")
        if v.ndim != 2:
            raise ValueError(f"integer_matmul: {name} must be 2-D")
        if np.any(np.abs(v.astype(np.float64)) > 2**31):
            raise ValueError(f"integer_matmul: {name} holds values beyond int32")
        return np.ascontiguousarray(v.astype(np.int32))
    av, bv = ints(a, "a"), ints(b, "b")
    cv = None if c is None else ints(c, "c")
    return _lplab.integer_matmul(av, np.ascontiguousarray(bv.T), cv, instruction)


def smoothquant(x: Any, w: Any, alpha: float = 0.5, *, act_amax: Any = None) -> tuple:
    """SmoothQuant's smoothing (smooth.py smooth_ln_fcs) of activations x
    (tokens x K) and weights w (N x K): per input channel
    s = max(a^alpha / max(w_amax, 1e-5)^(1 - alpha), 1e-5), a the channel's
    max |x| (or act_amax, from calibration); returns (x / s, w * s, s), whose
    product x w^T is unchanged up to rounding and whose activations quantize
    better per tensor or per token (docs/integer-scaling.md)."""
    xa, _ = _operand(x)
    wa, _ = _operand(w)
    a = None if act_amax is None else np.asarray(act_amax, np.float32)
    return _lplab.smoothquant(xa, wa, float(alpha), a)


def swizzle_scales(scales: Any, *, pad: int = 0) -> np.ndarray:
    """The scale codes of a block-scaled operand (rows x K/block, e.g.
    q.scales reshaped to (rows, -1)) in the layout NVIDIA's block-scaled GEMMs
    read: cuBLAS's 128x4 blocked layout, torch's SWIZZLE_32_4_4, tcgen05's
    scale-factor layout -- 512-byte tiles of 128 rows x 4 blocks, padding
    bytes `pad` (docs/recipes.md)."""
    codes = scales.codes if isinstance(scales, Array) else np.asarray(scales)
    if codes.dtype.itemsize != 1:
        raise ValueError(f"scales: one-byte scale codes (uint8 or an lplab Array of E8M0/E4M3), not {codes.dtype}")
    return _lplab.swizzle_scales(np.ascontiguousarray(codes.view(np.uint8)), pad)


def unswizzle_scales(swizzled: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The rows x cols grid of scale codes out of swizzle_scales' bytes."""
    return _lplab.unswizzle_scales(np.ascontiguousarray(swizzled), rows, cols)


@_documented
def cvt_rs(x: Any, form: str = "e2m1x4", *, seed: int = 0, subsequence: int = 0, stream: str = "philox",
           layout: str = "sm_100a", relu: bool = False, satfinite: bool = True) -> Array:
    """PTX's cvt.rs -- stochastic rounding as sm_100a/sm_103a do it -- over
    float32 values: each run of the form's 2 or 4 elements is one
    instruction, whose rbits come from the stream ({rbits_stream}) at (seed,
    subsequence, group). form: one of {cvt_rs_form}; layout: "sm_100a" or
    "sm_103a", which rbits byte each element reads (docs/recipes.md)."""
    arr, _ = _operand(x)
    codes, fmt = _lplab.cvt_rs(arr, form, seed, subsequence, stream, layout, relu, satfinite)
    return Array(codes, fmt)


def hadamard(x: Any, *, signs: int = 0xD7E8, inverse: bool = False, bf16: bool | None = None) -> np.ndarray:
    """The random Hadamard transform of NVFP4 training along the last
    dimension, in groups of 16: x . diag(s) . H / 4 with Transformer Engine's
    signs (mask 0xD7E8, bit i where s_i = -1), rounded to bfloat16 as TE does
    (bf16=False keeps float32); inverse=True undoes it, in float32 unless
    bf16=True. For the wgrad GEMM's operands pass them K-major (X.T, dY.T)."""
    if not 0 <= signs <= 0xFFFF:
        raise ValueError(f"signs: a 16-bit mask (bit i set where sign i is -1), not {signs}")
    arr, _ = _operand(x)
    return _lplab.hadamard(arr, signs, inverse, (not inverse) if bf16 is None else bf16)


@_documented
def quantize_four_over_six(x: Any, *, metric: str = "mse", e4m3_max: float = 256.0, order: str = "fouroversix",
                           block_rows: int = 1):
    """Four Over Six NVFP4 (arXiv 2512.02010): each block of 16 scaled to a
    maximum of 6 or of 4, whichever has the smaller error. metric: one of
    {four_over_six_metric}; order: one of {four_over_six_order}. block_rows=16
    (order="te"): x is a matrix and each 16 x 16 block chooses for all its
    rows, as Transformer Engine's 2D weights do (docs/recipes.md). Returns
    (codes, scales, amax, blocks that kept 4)."""
    arr, _ = _operand(x)
    codes, scales, amax, fours = _lplab.quantize_four_over_six(arr, metric, e4m3_max, order, block_rows)
    return Array(codes, "float4_e2m1fn"), Array(scales, "float8_e4m3fn"), amax, fours


def dequantize_four_over_six(codes: Any, scales: Any, amax: float, *, e4m3_max: float = 256.0,
                             block_rows: int = 1) -> np.ndarray:
    """((q * s) * amax) / (6 * e4m3_max) for quantize_four_over_six's codes and scales."""
    c, _ = _operand(codes, "float4_e2m1fn", "codes")
    s, _ = _operand(scales, "float8_e4m3fn", "scales")
    return _lplab.dequantize_four_over_six(c, s, amax, e4m3_max, block_rows)


def recipes() -> list[str]:
    """The named recipes (fp32, bf16_amp, ..., nvfp4_training, nvfp4_4over6),
    in the order ``lplab recipe --list`` shows them."""
    return [name for name, _, _ in _lplab.recipes()]


def recipe(name: str) -> dict[str, Any]:
    """The recipe called `name` (docs/recipes.md): its summary and source;
    ``gemms`` -- fprop, dgrad and wgrad, each with operands ``a`` and ``b``
    (format, scaling, block as [rows, cols] along M or N and K, scale_format,
    scale_rule, tensor_scale, round, hadamard, four_over_six) and its
    accumulation; ``generations`` -- every GPU generation of the matrix-unit
    presets, whether it runs the recipe and with which preset for each GEMM
    (``mma``, ``accumulators``). A block operand's parameters are what
    ``quantize`` takes. ValueError for an unknown name."""
    return json.loads(_lplab.recipe_json(name))


@_documented
def quantize_tensor(x: Any, elem: str = "float8_e4m3fn", *, margin: int = 0, amax: str = "current",
                    history: Any = None):
    """Per-tensor FP8 scaling (Transformer Engine): (Array, scale, amax),
    with ``x * scale`` rounded to nearest-even with saturation. amax: one of
    {amax} (the history ones from ``history``)."""
    arr, _ = _operand(x)
    h = None if history is None else np.asarray(history, np.float32)
    codes, s, a = _lplab.quantize_tensor(arr, elem, margin, amax, h)
    return Array(codes, elem), s, a


def dequantize_tensor(codes: Array, scale: float) -> np.ndarray:
    """float(code) / scale."""
    return _lplab.dequantize_tensor(codes.codes, codes.format, scale)


@_documented
def quantize_tiles(x: Any, elem: str = "float8_e4m3fn", *, tile: tuple[int, int] = (1, 128),
                   amax_floor: float | None = None, rule: str = "deepseek"):
    """Fine-grained FP8 scaling of a matrix, a float32 scale per tile:
    rule one of {tile_rule} -- DeepSeek-V3's (amax_floor 1e-4 by default) or
    Transformer Engine's Float8BlockScaling (te, te_pow2: amax_floor 0, TE's
    amax_epsilon). Returns (Array, scales); values are codes * scales."""
    arr, _ = _operand(x)
    floor = (1e-4 if rule == "deepseek" else 0.0) if amax_floor is None else amax_floor
    codes, scales = _lplab.quantize_tiles(arr, elem, tile[0], tile[1], floor, rule)
    return Array(codes, elem), scales


def dequantize_tiles(codes: Array, scales: np.ndarray, *, tile: tuple[int, int] = (1, 128)) -> np.ndarray:
    return _lplab.dequantize_tiles(codes.codes, np.asarray(scales, np.float32), codes.format, tile[0], tile[1])


# ---------------------------------------------------------------------------
# Elementwise ops and reductions


@_documented
def map(x: Any, chain: Iterable, *, out_format: str | None = None, compute: str = "per_op",
        round: str = "nearest_even", overflow: str = "ieee", seed: int = 0, threads: int = 1, format=None):
    """A chain of unary ops on every element: ``chain`` is a list of op names
    or (op, param) pairs ({unary}). compute: one of {compute} (per_op rounds
    into the output format after every op, as a framework does; fused keeps
    fp32 throughout, one rounding; fp64 is the reference). The output format
    is x's unless given."""
    arr, fmt = _operand(x, format)
    steps = [(s, 0.0) if isinstance(s, str) else (s[0], float(s[1])) for s in chain]
    codes = _lplab.map_unary(arr, fmt, steps, out_format or "", compute, round, overflow, seed, threads)
    return _result(codes, _lplab.format_name(out_format) if out_format else _out_name(arr, fmt))


def _out_name(arr, fmt: str) -> str:
    if fmt:
        return _lplab.format_name(fmt)
    # The input's own dtype names its format (float32, float16, bfloat16, ...).
    return _lplab.format_name(_dtype_format(arr))


def _dtype_format(arr) -> str:
    if isinstance(arr, np.ndarray):
        return {"float32": "float32", "float16": "float16"}.get(arr.dtype.name, arr.dtype.name)
    return str(getattr(arr, "dtype", "float32")).replace("torch.", "")


def _unary(op: str):
    def f(x: Any, *, out_format: str | None = None, compute: str = "per_op", round: str = "nearest_even",
          overflow: str = "ieee", seed: int = 0, threads: int = 1, format=None):
        return map(x, [op], out_format=out_format, compute=compute, round=round, overflow=overflow, seed=seed,
                   threads=threads, format=format)
    f.__name__ = op
    f.__doc__ = (f"{op} of every element, computed in fp32 (compute=\"fp64\": the double reference) and "
                 "rounded into the output format (x's unless given).")
    return f


cast = _unary("identity")
cast.__name__ = "cast"
relu = _unary("relu")
gelu_tanh = _unary("gelu_tanh")
gelu_erf = _unary("gelu_erf")
square = _unary("square")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")


def pow(x: Any, p: float, **options):
    """x ** p (fp32 powf), rounded into the output format."""
    return map(x, [("pow", p)], **options)


def scale(x: Any, s: float, **options):
    """s * x, rounded into the output format."""
    return map(x, [("scale", s)], **options)


def _binary(op: str, alpha: float, a: Any, b: Any, out_format, round, overflow, seed, threads):
    aa, af = _operand(a, name="a")
    bb, bf = _operand(b, name="b")
    codes = _lplab.map_binary(op, alpha, aa, af, bb, bf, out_format or "", round, overflow, seed, threads)
    return _result(codes, _lplab.format_name(out_format) if out_format else _out_name(aa, af))


def add(a: Any, b: Any, *, out_format: str | None = None, round: str = "nearest_even", overflow: str = "ieee",
        seed: int = 0, threads: int = 1):
    """a + b (numpy broadcasting), one rounding into the output format (a's unless given)."""
    return _binary("add", 0.0, a, b, out_format, round, overflow, seed, threads)


def mul(a: Any, b: Any, *, out_format: str | None = None, round: str = "nearest_even", overflow: str = "ieee",
        seed: int = 0, threads: int = 1):
    """a * b (numpy broadcasting), one rounding into the output format."""
    return _binary("mul", 0.0, a, b, out_format, round, overflow, seed, threads)


def axpy(alpha: float, x: Any, y: Any, *, out_format: str | None = None, round: str = "nearest_even",
         overflow: str = "ieee", seed: int = 0, threads: int = 1):
    """alpha * x + y with one rounding (a fused multiply-add)."""
    return _binary("axpy", float(alpha), x, y, out_format, round, overflow, seed, threads)


def triu(x: Any, diagonal: int = 0, *, format=None):
    """The upper triangle of the last two dimensions (+0 below), as torch.triu."""
    arr, fmt = _operand(x, format)
    return _result(_lplab.triu(arr, fmt, diagonal), _out_name(arr, fmt))


@_documented
def sum(x: Any, *, accumulate: str = "fp32", format=None) -> float:
    """The sum of every element in row-major order; accumulate: one of
    {accumulate} (storage: the input's own format, rounded after every add)."""
    arr, fmt = _operand(x, format)
    return _lplab.reduce("sum", arr, fmt, accumulate)


def mean(x: Any, *, accumulate: str = "fp32", format=None) -> float:
    """sum / numel, the division in the accumulation's precision."""
    arr, fmt = _operand(x, format)
    return _lplab.reduce("mean", arr, fmt, accumulate)


def amax(x: Any, *, format=None) -> float:
    """max |x| (exact; NaN if any element is NaN)."""
    arr, fmt = _operand(x, format)
    return _lplab.reduce("amax", arr, fmt, "fp64")


# ---------------------------------------------------------------------------
# Matrix multiplication


def matmul(a: Any, b: Any, *, accumulator: str = "fp32", out_format: str = "float32",
           promote_every: int | None = None, params: Mapping[str, int] | None = None, scale_a: float = 1.0,
           scale_b: float = 1.0, round: str = "nearest_even", overflow: str = "ieee", seed: int = 0,
           threads: int = 1, c: Any = None, a_format: str | None = None, b_format: str | None = None):
    """C = scale_a * scale_b * A @ B with an emulated accumulator.

    accumulator: a preset -- fp64 (the exact sum), fp32, fp16, bf16,
    bf16_dot2, tensor_core, hopper_wgmma_fp8, hopper_wgmma_bf16,
    deepseek_v3_fp8 -- or a matrix-unit instruction
    ("hopper.wgmma.f32.e4m3.e4m3"; :func:`accumulators` lists them all).
    promote_every=N promotes the chain into fp32 every N products; params
    replaces the tensor-core model's fields (block, fraction_bits,
    result_bits, zero_exponent). c: an input C (float64, m x n) for
    instruction accumulators. Operands may be any format and layout."""
    aa, af = _operand(a, a_format, "a")
    bb, bf = _operand(b, b_format, "b")
    p = dict(params or {})
    if promote_every is not None:
        p["promote_every"] = promote_every
    cc = None if c is None else np.asarray(c, np.float64)
    codes = _lplab.matmul(aa, af, bb, bf, out_format, accumulator, p, scale_a, scale_b, round, overflow, seed,
                          threads, cc)
    return _result(codes, _lplab.format_name(out_format))


def matmul_blocks(a: Quantized, b_t: Quantized, *, accumulator: str = "fp32", out_format: str = "float32",
                  promote_every: int | None = None, params: Mapping[str, int] | None = None, scale_a: float = 1.0,
                  scale_b: float = 1.0, round: str = "nearest_even", overflow: str = "ieee", seed: int = 0,
                  threads: int = 1):
    """C = A @ B for block-scaled operands, K-major as block-scaled GEMMs take
    them: ``a`` is A (m x k) and ``b_t`` is B transposed (n x k), each from
    :func:`quantize` of a 2-D array whose k is a multiple of the block size
    (``lplab.quantize(b.T.copy(), "mxfp8_e4m3")``; NVFP4 training's weights
    ``lplab.quantize(w, "nvfp4_te_2d")``, 16 x 16 blocks). A block-scaled
    matrix-unit instruction (``accumulators()``: the ``block_scale`` ones)
    applies the scales inside its dot products, as the hardware does, each
    1 x B slice of a 2D-scaled operand with its block's scale; every other
    accumulator sums the dequantized values' products."""
    def parts(q: Quantized, name: str):
        if not isinstance(q, Quantized):
            raise ValueError(f"{name}: a lplab.Quantized (lplab.quantize of a 2-D array)")
        elems = unpack(q.elems, q.elem, int(np.prod(q.shape))).codes.reshape(q.shape) if q.packed else q.elems.codes
        return (elems, q.scales.codes, q.elem, q.scale, q.block_size, q.rule, q.uses_tensor_scale,
                float(q.tensor_scale), q.block_rows)
    p = dict(params or {})
    if promote_every is not None:
        p["promote_every"] = promote_every
    codes = _lplab.matmul_blocks(*parts(a, "a"), *parts(b_t, "b_t"), out_format, accumulator, p, scale_a, scale_b,
                                 round, overflow, seed, threads)
    return _result(codes, _lplab.format_name(out_format))


def accumulators() -> list[tuple[str, str, str]]:
    """Every accumulator preset: (name, aliases, description)."""
    return _lplab.accumulators()
