"""The element-wise functions of one and two arguments and the comparisons, against NumPy
on random data with NaN, infinities and signed zeros, of sizes 0, 1, odd and > 256."""

import numpy as np
import pytest

import ctensor

UNARY = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "log": np.log, "log1p": np.log1p,
    "expm1": np.expm1, "square": np.square, "reciprocal": np.reciprocal,
    "rsqrt": lambda x: 1 / np.sqrt(x), "floor": np.floor, "ceil": np.ceil,
    "rint": np.rint, "negative": np.negative, "sqrt": np.sqrt, "exp": np.exp,
}
BINARY = {
    "power": np.power, "arctan2": np.arctan2, "hypot": np.hypot,
    "copysign": np.copysign, "fmod": np.fmod, "logaddexp": np.logaddexp,
}
COMPARE = {
    "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "equal": np.equal, "not_equal": np.not_equal,
}


def data(rng, n, dtype):
    x = rng.uniform(-4, 4, n)
    idx = np.arange(0, n, 7)
    x[idx] = np.resize([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0], len(idx))
    return x.astype(dtype)


@pytest.mark.parametrize("n", [0, 1, 7, 301])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_functions_match_numpy(n, dtype):
    x = data(np.random.default_rng(n), n, dtype)
    t = ctensor.from_numpy(x)
    with np.errstate(all="ignore"):
        for name, f in UNARY.items():
            got = getattr(ctensor, name)(t).numpy()
            want = f(x)
            assert got.dtype == want.dtype, name
            np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-14,
                                       err_msg=name)


@pytest.mark.parametrize("n", [0, 1, 7, 301])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_functions_and_comparisons_match_numpy(n, dtype):
    rng = np.random.default_rng(100 + n)
    x, y = data(rng, n, dtype), data(rng, n, dtype)[::-1].copy()
    tx, ty = ctensor.from_numpy(x), ctensor.from_numpy(y)
    with np.errstate(all="ignore"):
        for name, f in {**BINARY, **COMPARE}.items():
            got = getattr(ctensor, name)(tx, ty).numpy()
            want = f(x, y)
            if name in COMPARE:
                np.testing.assert_array_equal(got, want.astype(np.int32), err_msg=name)
            else:
                assert got.dtype == want.dtype, name
                np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-15,
                                           err_msg=name)


def test_integers_numbers_broadcasting_and_operators():
    a = np.array([7, -7, 7, -7, 5, 9], dtype=np.int32)
    b = np.array([3, 3, -3, -3, 2, 4], dtype=np.int32)
    ta, tb = ctensor.from_numpy(a), ctensor.from_numpy(b)
    # fmod of integers stays integer; arctan2 of integers is float64 (NumPy's types).
    np.testing.assert_array_equal(ctensor.fmod(ta, tb).numpy(), np.fmod(a, b))
    got = ctensor.arctan2(ta, tb).numpy()
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.arctan2(a, b), rtol=1e-15)
    np.testing.assert_array_equal(ctensor.sqrt(ta).numpy(), np.sqrt(a))
    # Python numbers on either side, weakly promoted: float32 stays float32.
    x = np.linspace(-3, 3, 9, dtype=np.float32)
    tx = ctensor.from_numpy(x)
    got = ctensor.hypot(tx, 4).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.hypot(x, np.float32(4)), rtol=1e-7)
    np.testing.assert_allclose(ctensor.arctan2(1.0, tx).numpy(), np.arctan2(np.float32(1), x),
                               rtol=1e-6)
    np.testing.assert_array_equal(ctensor.less(tx, 0).numpy(), (x < 0).astype(np.int32))
    # Broadcasting: a column against a row.
    col, row = np.arange(3.0).reshape(3, 1), np.arange(1.0, 5.0).reshape(1, 4)
    np.testing.assert_allclose(ctensor.hypot(ctensor.from_numpy(col), row).numpy(),
                               np.hypot(col, row), rtol=1e-15)
    # ** and abs().
    np.testing.assert_allclose((tx ** 2).numpy(), x ** 2, rtol=1e-7)
    np.testing.assert_allclose((2.0 ** tx).numpy(), np.float32(2) ** x, rtol=1e-6)
    np.testing.assert_array_equal(abs(ta).numpy(), np.abs(a))
    with pytest.raises(TypeError):
        pow(tx, 2, 3)


def test_bad_operands_are_clear_errors():
    z = ctensor.from_numpy(np.array([1 + 2j]))
    with pytest.raises(ctensor.Error, match="arctan2|atan2"):
        ctensor.arctan2(z, z)
    # A string is no array: NumPy's conversion gives a unicode array, which is refused.
    with pytest.raises((TypeError, BufferError)):
        ctensor.hypot("one", 2.0)
    with pytest.raises(ctensor.Error):
        ctensor.hypot(ctensor.from_numpy(np.zeros(3)), np.zeros(4))
    with pytest.raises(OverflowError):
        ctensor.fmod(ctensor.from_numpy(np.array([1], dtype=np.int32)), 2**40)
