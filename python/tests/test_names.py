"""The names an argument takes come from one declaration in C++ (an X-macro
list beside each enum): the docstrings list them from it, and a name outside
it is refused with every name it could have been."""
import numpy as np
import pytest

import lplab
from lplab import _lplab

NAMES = _lplab.enum_names()


def test_every_enumeration_has_its_names():
    assert NAMES["round"] == ["nearest_even", "nearest_away", "toward_zero", "upward", "downward", "stochastic"]
    assert NAMES["overflow"] == ["ieee", "saturate", "wrap"]
    assert NAMES["unary"] == ["identity", "relu", "gelu_tanh", "gelu_erf", "square", "sqrt", "rsqrt", "pow", "scale"]
    assert NAMES["compute"] == ["per_op", "fused", "fp64"]
    assert NAMES["accumulate"] == ["fp64", "fp32", "storage"]
    assert NAMES["rule"] == ["floor", "ceil", "amax_ratio", "amax_ratio_te", "rceil", "even", "ceil_amax", "deepseek",
                             "te_fp32", "te_fp32_pow2"]
    assert NAMES["amax"] == ["current", "history_max", "history_most_recent"]


@pytest.mark.parametrize("func, kinds", [
    (lplab.convert, ["round", "overflow"]),
    (lplab.quantize, ["rule"]),
    (lplab.quantize_tensor, ["amax"]),
    (lplab.map, ["unary", "compute"]),
    (lplab.sum, ["accumulate"]),
])
def test_docstrings_list_every_name(func, kinds):
    for kind in kinds:
        assert ", ".join(NAMES[kind]) in func.__doc__, (func.__name__, kind)


@pytest.mark.parametrize("call, noun, kind", [
    (lambda: lplab.convert(np.ones(2, np.float32), "bf16", round="sideways"), "rounding", "round"),
    (lambda: lplab.map(np.ones(2, np.float32), ["rleu"]), "unary op", "unary"),
    (lambda: lplab.map(np.ones(2, np.float32), ["relu"], compute="fused32"), "compute policy", "compute"),
    (lambda: lplab.sum(np.ones(2, np.float32), accumulate="fp8"), "accumulation", "accumulate"),
    (lambda: lplab.quantize(np.ones(32, np.float32), rule="round"), "scale rule", "rule"),
])
def test_an_unknown_name_is_refused_with_every_name(call, noun, kind):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(f"unknown {noun} '")
    assert f"({', '.join(NAMES[kind])})" in str(e.value)


def test_quantize_docstring_lists_every_block_scheme():
    assert ", ".join(lplab.block_schemes()) in lplab.quantize.__doc__
    assert "nvfp4_te" in lplab.quantize.__doc__


def test_format_names_are_not_enumeration_names():
    # An enumeration's kind ("round") is no format: the format-name cache and
    # the enumerations' names are separate tables.
    with pytest.raises(ValueError, match="round"):
        lplab.convert(np.ones(2, np.float32), "round")
    y = lplab.convert(np.float32([1.0 + 2.0**-9]), "bf16")
    assert float(np.asarray(y)[0]) == 1.0


def test_public_bindings_are_the_packages():
    # python/src's def_public: one call binds a function and makes it lplab's.
    for name in ["cpu_model", "simd_target", "simd_targets", "force_simd_target", "cpu_extensions"]:
        assert name in _lplab._public
        assert getattr(lplab, name) is getattr(_lplab, name)
        assert name in lplab.__all__
    assert lplab.simd_target() in lplab.simd_targets()
    assert set(lplab.cpu_extensions()) <= {"AVX512_VBMI", "AVX512_FP16", "AVX512_BF16"}
