"""The laboratory from Python: experiments, the report, regression checks,
finfo and the package's surface."""
import json
import os
import signal
import subprocess

import numpy as np
import pytest

import lplab
from conftest import ROOT, built, needs_ml_dtypes


def test_experiments_are_listed_with_their_parameters():
    ex = {e["name"]: e for e in lplab.experiments()}
    assert "underflow" in ex and "matmul_error" in ex
    assert all(isinstance(p["name"], str) for e in ex.values() for p in e["params"])


def test_run_returns_the_tools_tables():
    tables = lplab.run("underflow", ["fp16", "bf16"])
    t = tables["underflow_values"]
    assert t.columns[:3] == ["value", "dtype", "result"]
    assert str(t).startswith("## ")
    rows = {(r[0], r[1]): r for r in t}
    # The value column is the text as written (read exactly, rounded once).
    assert rows[("1e-8", "float16")][2] == 0.0
    assert rows[("1e-8", "bfloat16")][2] == 1.0011717677116394e-08
    arr = t.to_numpy()
    assert arr.dtype.names == tuple(t.columns) and len(arr) == len(t)
    assert t["result"].dtype == np.float64
    tool = built("tools/lplab", "LPLAB_TOOL")
    if tool is not None:  # the same table the CLI prints
        out = subprocess.run([tool, "run", "underflow", "--dtypes", "fp16,bf16", "--output", "csv"],
                             capture_output=True, text=True, check=True).stdout
        assert t.to_csv() in out


def test_run_with_input_values_and_params():
    x = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    tables = lplab.run("error", ["bf16"], input=x)
    assert tables
    with pytest.raises(ValueError, match="takes no input"):
        lplab.run("footprint", input=x)
    with pytest.raises(ValueError, match="unknown experiment|no experiment"):
        lplab.run("nosuch")
    with pytest.raises(ValueError):
        lplab.run("underflow", nosuch_param=3)


def test_report_quick(tmp_path):
    out = tmp_path / "report"
    summary = lplab.report(out, quick=True, threads=2, progress=False)
    assert (out / "index.html").is_file() and (out / "index.md").is_file()
    assert len(summary) > 0
    bad = tmp_path / "mine"
    bad.mkdir()
    (bad / "notes.txt").write_text("mine")
    with pytest.raises(ValueError):
        lplab.report(bad, quick=True)
    assert (bad / "notes.txt").read_text() == "mine"


def test_regress_spec_and_baselines(tmp_path):
    spec = tmp_path / "checks.yaml"
    spec.write_text("checks:\n"
                    "  - name: bf16 round trip\n"
                    "    convert: {format: bfloat16, input: {distribution: normal, sigma: 1, n: 4096, seed: 1}}\n"
                    "    max_rel_err: {max: 2^-8}\n")
    junit = tmp_path / "out.xml"
    try:
        r = lplab.regress(spec, junit=junit)
    except ValueError as e:  # the schema is docs/regress.md's: show the message if this spec drifts from it
        pytest.fail(f"spec rejected: {e}")
    assert r.passed and len(r.checks) == 1 and junit.is_file()
    assert r.checks[0]["measured"] <= 2.0 ** -8
    base = lplab.regress(only=["finfo"])
    assert base.passed and base.suites[0]["entries"] > 100
    with pytest.raises(ValueError):
        lplab.regress(tmp_path / "missing.yaml")


def test_the_signal_handler_is_python_s_again(python_sigint):
    import threading
    before = signal.getsignal(signal.SIGINT)
    lplab.run("underflow", ["bf16"])
    assert signal.getsignal(signal.SIGINT) is before
    # Overlapping calls (they release the GIL): Python's handler once all are done.
    errors = []
    def work():
        try:
            lplab.run("underflow", ["bf16", "fp16"])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert signal.getsignal(signal.SIGINT) is before
    # ... and Ctrl-C still reaches Python.
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass


@needs_ml_dtypes
def test_run_takes_ml_dtypes_and_lplab_arrays_as_input():
    import ml_dtypes
    x = np.random.default_rng(1).standard_normal(2048).astype(np.float32)
    a = lplab.run("error", ["e4m3"], input=x.astype(ml_dtypes.bfloat16))
    b = lplab.run("error", ["e4m3"], input=lplab.convert(x, "bf16"))
    assert [str(t) for t in a.values()] == [str(t) for t in b.values()]


@needs_ml_dtypes
def test_finfo_matches_ml_dtypes():
    import ml_dtypes
    for name in lplab.formats():
        t = getattr(ml_dtypes, name, None) if name not in ("float16", "float32") else getattr(np, name)
        if t is None or lplab.finfo(name).encoding == "integer":  # (iinfo: test_integers.py)
            continue
        ours, theirs = lplab.finfo(name), ml_dtypes.finfo(t)
        assert ours.bits == theirs.bits, name
        for field in ("eps", "max", "min", "smallest_subnormal", "smallest_normal"):
            assert getattr(ours, field) == float(getattr(theirs, field)), (name, field)
        assert ours.resolution_numpy == float(theirs.resolution), name
    f = lplab.finfo("e4m3")
    assert (f.max, f.nan_code, f.has_infinity, f.overflow_threshold) == (448.0, 0x7F, False, 464.0)


def test_finfo_has_every_field():
    # The attributes are generated from finfo's one field list
    # (LPLAB_FINFO_FIELDS): has_zero and max_code, which `lplab finfo` leaves
    # out, are here too; a code is an int, the encoding its text.
    f = lplab.finfo("e4m3")
    assert (f.encoding, f.has_zero, f.max_code, f.nan_code) == ("fn", True, 0x7E, 0x7F)
    e8m0 = lplab.finfo("float8_e8m0fnu")
    assert (e8m0.has_zero, e8m0.max_code, e8m0.encoding) == (False, 0xFE, "fn")
    declared = lplab.finfo("e3m3:bias=3")
    assert (declared.encoding, declared.max_code, declared.inf_code) == ("ieee", 0x37, 0x38)


def test_package_surface():
    assert lplab.__version__
    assert lplab.format_name("bf16") == "bfloat16"
    assert lplab.simd_target() in lplab.simd_targets()
    assert "float8_e4m3fn" in lplab.formats()
    assert set(lplab.block_schemes()) >= {"mxfp8_e4m3", "mxfp4", "nvfp4"}
    pyi = os.path.join(os.path.dirname(lplab.__file__), "_lplab.pyi")
    assert os.path.isfile(pyi) and "def convert(" in open(pyi).read()
    assert os.path.isfile(os.path.join(os.path.dirname(lplab.__file__), "py.typed"))


def test_every_simd_target_gives_the_same_bits():
    x = np.random.default_rng(5).standard_normal(100_003).astype(np.float32) * 100
    want = None
    try:
        for t in lplab.simd_targets():
            lplab.force_simd_target(t)
            if t != "AVX3":
                assert lplab.cpu_extensions() == [], t  # AVX-512's extensions only under AVX3
            got = (lplab.convert(x, "e4m3").codes, lplab.relu(lplab.convert(x, "bf16")).codes,
                   lplab.quantize(x, "mxfp4", packed=True).elems, lplab.scale(lplab.convert(x, "e4m3"), 0.5).codes)
            if want is None:
                want = got
            assert all((g == w).all() for g, w in zip(got, want)), t
    finally:
        lplab.force_simd_target("auto")


def test_the_readme_example_prints_what_the_readme_shows():
    import contextlib
    import io
    import re
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- python-example.*?-->\n```python\n(.*?)```\n\n```text\n(.*?)```", text, re.S)
    assert m, "README.md has no python-example block"
    code, shown = m.group(1), m.group(2)
    assert len(code.strip().splitlines()) == 5
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue() == shown
