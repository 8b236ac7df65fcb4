"""Shared helpers of the Python package's tests (pytest; scripts/test.sh runs them
against the package installed in build/pyenv)."""
import os
import pathlib
import shutil
import signal

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

try:
    import ml_dtypes
except ImportError:  # the comparisons with ml_dtypes report SKIPPED without it
    ml_dtypes = None

needs_ml_dtypes = pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")


def built(name: str, env: str):
    """A program of the C++ build (the tool, the C++ converter): $env, else build/release."""
    path = os.environ.get(env) or str(ROOT / "build" / "release" / name)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def theirs(name: str):
    """ml_dtypes' (numpy's, for float16, float32, int8 and uint8) type of a format, or None."""
    if name in ("float16", "float32", "int8", "uint8"):
        return getattr(np, name)
    return getattr(ml_dtypes, name, None) if ml_dtypes is not None else None


def codes_view(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def same_values(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Equal, or both NaN."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    return (x == y) | (np.isnan(x) & np.isnan(y))


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler for the test's length: a process started in
    the background by a non-interactive shell inherits SIGINT ignored, and
    Python then leaves it ignored -- Ctrl-C could not reach any Python code.
    The tests of lplab's handling of Ctrl-C need Python's handler to start from."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
