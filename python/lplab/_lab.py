"""The laboratory from Python: experiments, the report and regression checks."""
from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np

from . import _lplab
from ._arrays import operand as _operand


class Table:
    """One result table: ``id``, ``title``, ``columns`` (names), ``units``,
    ``rows`` (tuples; None for an empty cell) and ``notes``. ``str(t)`` is the
    text the tool prints; ``t["column"]`` a numpy array; ``t.to_numpy()`` a
    structured array; ``t.to_dict()`` columns as arrays (pandas.DataFrame
    takes it)."""

    __slots__ = ("id", "title", "columns", "units", "rows", "notes", "_text", "_csv")

    def __init__(self, d: dict):
        self.id = d["id"]
        self.title = d["title"]
        self.columns = [c for c, _ in d["columns"]]
        self.units = [u for _, u in d["columns"]]
        self.rows = d["rows"]
        self.notes = d["notes"]
        self._text = d["text"]
        self._csv = d["csv"]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"lplab.Table({self.id!r}, {len(self.rows)} rows, columns={self.columns})"

    def to_csv(self) -> str:
        return self._csv

    def __getitem__(self, column: str) -> np.ndarray:
        try:
            i = self.columns.index(column)
        except ValueError:
            raise KeyError(f"{self.id} has no column '{column}' ({', '.join(self.columns)})") from None
        return _column_array([r[i] for r in self.rows])

    def to_dict(self) -> dict[str, np.ndarray]:
        return {c: self[c] for c in self.columns}

    def to_numpy(self) -> np.ndarray:
        """The rows as a numpy structured array, one field per column."""
        cols = [self[c] for c in self.columns]
        dtype = [(c, a.dtype) for c, a in zip(self.columns, cols)]
        out = np.empty(len(self.rows), dtype=dtype)
        for c, a in zip(self.columns, cols):
            out[c] = a
        return out


def _column_array(cells: list) -> np.ndarray:
    """int64 where every cell is an integer, float64 where every cell is a
    number or empty (NaN), else text ('' for empty)."""
    kinds = {type(c) for c in cells if c is not None}
    if kinds <= {int} and None not in cells:
        return np.array(cells, dtype=np.int64)
    if kinds <= {int, float}:
        return np.array([np.nan if c is None else c for c in cells], dtype=np.float64)
    return np.array(["" if c is None else str(c) for c in cells], dtype=str)


def experiments() -> list[dict]:
    """Every experiment: name, summary, params (name, type, default, min,
    max, help, choices), default_dtypes, takes_input."""
    return _lplab.experiments()


def run(experiment: str, dtypes: Sequence[str] | str | None = None, *, input: Any = None,
        input_dtype: str | None = None, shard: str = "0/1", threads: int = 0, **params) -> dict[str, Table]:
    """Runs one experiment (``lplab run``) and returns its tables by id.
    Parameters are keyword arguments (lists as Python lists); ``input`` is a
    .npy path or an array of values (float64, float32, or any format's
    Array or ml_dtypes array) for the experiments that take one.
    Everything is checked before any work (ValueError)."""
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    text = {k: _param_text(v) for k, v in params.items()}
    path, arr, fmt = "", None, ""
    if isinstance(input, (str, os.PathLike)):
        path = os.fspath(input)
    elif input is not None:
        arr, fmt = _operand(input, name="input")
    tables = _lplab.run(experiment, list(dtypes or []), text, path, arr, fmt, input_dtype or "", shard, threads)
    return {t["id"]: Table(t) for t in tables}


def _param_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_param_text(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def report(out: str | os.PathLike = "lplab-report", *, quick: bool = False, threads: int = 0,
           progress: bool = True) -> Table:
    """Runs the report suite and writes the report directory (index.html,
    index.md, plots, every table as CSV and JSON), atomically; returns the
    summary table. quick=True: seconds, for tests."""
    return Table(_lplab.report(os.fspath(out), quick, threads, progress))


class Regression:
    """The outcome of :func:`regress`: ``passed``, and ``checks`` (a spec's,
    each a dict with name, passed, metric, measured, relation, limit,
    context, detail, line, seconds) or ``suites`` (lplab's own baselines:
    suite, entries, changes; a change is a dict of key, baseline, now and
    tolerance, baseline None for a new entry and now None for one no longer
    computed)."""

    __slots__ = ("checks", "suites")

    def __init__(self, checks=None, suites=None):
        self.checks = checks or []
        self.suites = suites or []

    @property
    def passed(self) -> bool:
        return all(c["passed"] for c in self.checks) and all(not s["changes"] for s in self.suites)

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        if self.suites:
            changed = [s["suite"] for s in self.suites if s["changes"]]
            return f"lplab.Regression({len(self.suites)} suites, passed={self.passed}, changed={changed})"
        failed = [c["name"] for c in self.checks if not c["passed"]]
        return f"lplab.Regression({len(self.checks)} checks, passed={self.passed}, failed={failed})"


def regress(spec: str | os.PathLike | None = None, *, junit: str | os.PathLike | None = None,
            baselines: str | os.PathLike | None = None, only: Sequence[str] | None = None) -> Regression:
    """Precision regression checks (``lplab regress``): a spec file's checks
    (docs/regress.md; ``junit`` also writes JUnit XML), or, without a spec,
    lplab's own baselines recomputed and compared (``baselines``: their
    directory, by default the copy of tests/regression installed with the
    package)."""
    if spec is not None:
        if baselines is not None or only:
            raise ValueError("baselines and only go with lplab's own suites, not a spec")
        return Regression(checks=_lplab.regress_spec(os.fspath(spec), os.fspath(junit) if junit else ""))
    if junit is not None:
        raise ValueError("junit needs a spec")
    d = os.fspath(baselines) if baselines is not None else os.path.join(os.path.dirname(__file__), "regression")
    if not os.path.isdir(d):
        raise ValueError(f"{d}: no such baseline directory (give baselines=DIR)")
    return Regression(suites=_lplab.regress_baselines(d, list(only or [])))
