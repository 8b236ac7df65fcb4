"""Arrays of an lplab format, and the one rule by which every function reads
its array arguments (``operand``).

An argument may be
  * a numpy array of float32 or float64 values (float64 is rounded once),
    or of float16 (numpy's own half);
  * an ml_dtypes array (bfloat16, float8_e4m3fn, float4_e2m1fn, ...): its
    bits are passed as an unsigned view, never copied;
  * an :class:`Array` (codes with their format);
  * any object with ``__dlpack__`` (a PyTorch or JAX CPU tensor), passed to
    the extension as it is: float32, float64, float16, bfloat16 and the
    float8 dtypes name their format;
  * unsigned integer codes with ``format=`` naming their format;
  * a Python number or list (read as float64).
Strided views are read in place where the kernels walk strides.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _lplab

try:  # optional: results as ml_dtypes arrays, ml_dtypes arrays as inputs
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - exercised where ml_dtypes is absent
    _ml_dtypes = None

_CATALOG = [name for name, _ in _lplab.formats()]
_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


_CANONICAL: dict = {}
_CODE_DTYPES: dict = {}


def canonical(name: str) -> str:
    """A format's canonical name ("bf16" -> "bfloat16"), remembered."""
    c = _CANONICAL.get(name)
    if c is None:
        c = _CANONICAL[name] = _lplab.format_name(name)
    return c


def _code_dtype(fmt: str) -> np.dtype:
    d = _CODE_DTYPES.get(fmt)
    if d is None:
        d = np.dtype(np.float32) if fmt == "float32" else np.dtype(_UNSIGNED[_lplab.storage_bits(fmt)])
        _CODE_DTYPES[fmt] = d
    return d


def new_result(x, fmt: str, out=None) -> np.ndarray:
    """The array a result in ``fmt`` of x's shape is written to: ``out``'s
    codes when given, else a new one."""
    if out is None:
        return np.empty(x.shape, _code_dtype(fmt))
    if isinstance(out, Array):
        if out.format != fmt:
            raise ValueError(f"out: an Array of {out.format}, not {fmt}")
        return out.codes
    return out


def ml_dtypes_dtype(fmt: str) -> np.dtype:
    """The numpy dtype ml_dtypes (or numpy, for float16, float32, int8 and uint8) gives format ``fmt``."""
    fmt = _lplab.format_name(fmt)
    if fmt == "float32":
        return np.dtype(np.float32)
    if fmt in ("float16", "int8", "uint8"):
        return np.dtype(fmt)
    if _ml_dtypes is None:
        raise ImportError("ml_dtypes is not installed (pip install ml_dtypes)")
    t = getattr(_ml_dtypes, fmt, None)
    if t is None:
        raise ValueError(f"ml_dtypes {_ml_dtypes.__version__} has no {fmt}")
    return np.dtype(t)


class Array:
    """Codes of an lplab format: ``codes`` is a numpy array (unsigned integers
    of the format's storage width; float32 values for float32) and ``format``
    the format's name. Slicing gives views; ``numpy()`` the exact values.

    >>> a = lplab.convert(np.array([1.0, 465.0], np.float32), "float8_e4m3fn")
    >>> a.codes, a.format, a.numpy()
    (array([ 56, 127], dtype=uint8), 'float8_e4m3fn', array([ 1., nan], dtype=float32))
    """

    __slots__ = ("codes", "format")
    __array_priority__ = 10

    def __init__(self, codes: Any, format: str):
        fmt = canonical(format)
        codes = np.asarray(codes)
        want = _code_dtype(fmt)
        if codes.dtype != want:
            if codes.dtype.kind in "ui" and codes.dtype.itemsize == want.itemsize and fmt != "float32":
                codes = codes.view(want)
            else:
                raise ValueError(f"codes: {fmt} codes are {want.name}, not {codes.dtype.name}")
        self.codes = codes
        self.format = fmt

    # numpy-like attributes
    @property
    def shape(self) -> tuple:
        return self.codes.shape

    @property
    def ndim(self) -> int:
        return self.codes.ndim

    @property
    def size(self) -> int:
        return self.codes.size

    @property
    def dtype(self) -> str:
        """The format's name (the codes' numpy dtype is ``codes.dtype``)."""
        return self.format

    @property
    def T(self) -> "Array":
        return Array(self.codes.T, self.format)

    @classmethod
    def wrap(cls, codes: np.ndarray, fmt: str) -> "Array":
        """An Array of codes already checked (the package's own results)."""
        a = cls.__new__(cls)
        a.codes = codes
        a.format = fmt
        return a

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, index) -> "Array":
        return Array(self.codes[index], self.format)

    def reshape(self, *shape) -> "Array":
        return Array(self.codes.reshape(*shape), self.format)

    def copy(self) -> "Array":
        return Array(self.codes.copy(), self.format)

    def numpy(self, dtype=np.float32) -> np.ndarray:
        """The exact values: float32 (every catalog format's values are
        float32 values) or float64 (declared formats)."""
        return decode(self, dtype=dtype)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        v = self.numpy(np.float64 if self.format not in _CATALOG else np.float32)
        return v if dtype is None else v.astype(dtype)

    def to_ml_dtypes(self) -> np.ndarray:
        """The same bits as an ml_dtypes array (numpy float16/float32 for those), without a copy."""
        return self.codes.view(ml_dtypes_dtype(self.format))

    def __dlpack__(self, *args, **kwargs):
        """The codes, as unsigned integers (DLPack has no dtype for most formats)."""
        return self.codes.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.codes.__dlpack_device__()

    def __eq__(self, other) -> bool:  # same format, same codes
        return (isinstance(other, Array) and other.format == self.format
                and np.array_equal(other.codes, self.codes))

    __hash__ = None  # mutable, as numpy arrays

    def __repr__(self) -> str:
        values = np.array2string(self.numpy(np.float64 if self.format not in _CATALOG else np.float32),
                                 threshold=8, separator=", ")
        return f"lplab.Array({self.format}, shape={self.shape}, values={values})"


_lplab._set_array_class(Array)  # convert_new's results are Arrays


def operand(x: Any, format: str | None = None, name: str = "x"):
    """(array, format name or "") for the extension: see the module's docstring."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.dtype.isnative:  # the common case first
        return x, format or ""
    if isinstance(x, Array):
        if format is not None and canonical(format) != x.format:
            raise ValueError(f"{name}: an Array of {x.format}, not {format}")
        return x.codes, x.format
    if isinstance(x, np.ndarray):
        if not x.dtype.isnative:  # another byte order: the values in this machine's, copied
            x = x.astype(x.dtype.newbyteorder("="))
        dt = x.dtype
        if dt.kind == "V" or type(dt).__module__.startswith("ml_dtypes") or dt.type.__module__.startswith("ml_dtypes"):
            fmt = dt.name
            if fmt not in _CATALOG:
                raise ValueError(f"{name}: ml_dtypes {fmt} is not an lplab format")
            return x.view(_code_dtype(fmt)), fmt
        if dt.kind in "bOUSMmVc":
            raise ValueError(f"{name}: dtype {dt} is not float32, float64 or an lplab format")
        return x, format or ""
    if hasattr(x, "__dlpack__"):
        return x, format or ""
    a = np.asarray(x)
    if a.dtype.kind in "iub" and format is None:
        a = a.astype(np.float64)
    return a, format or ""


def result(codes: np.ndarray, fmt: str):
    """float32 results as numpy arrays, others as Array."""
    return codes if fmt == "float32" else Array.wrap(codes, fmt)


def decode(x: Any, format: str | None = None, dtype=np.float32) -> np.ndarray:
    """The exact values of codes (an Array, an ml_dtypes array, or unsigned
    codes with ``format``) as float32 or float64."""
    d = np.dtype(dtype)
    if d not in (np.float32, np.float64):
        raise ValueError(f"dtype: float32 or float64, not {d}")
    arr, fmt = operand(x, format)
    return _lplab.decode(arr, fmt, d == np.float64)
