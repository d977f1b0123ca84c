"""The Python array API namespace (`Tensor.__array_namespace__()`, `ctensor.array_api`):
its coverage of the 2023.12 standard's names, counted, and its values against NumPy's
for every function on the same data. The public conformance suite (array-api-tests) is
published on GitHub only, not on PyPI, so `make test` cannot fetch it; this file is the
check that runs instead."""

import numpy as np
import pytest

import ctensor

xp = ctensor.array_api
RNG = np.random.default_rng(7)

# The standard's names (2023.12): the main namespace, then the two extensions.
STANDARD = """
e inf nan newaxis pi
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones
ones_like tril triu zeros zeros_like
astype can_cast finfo iinfo isdtype result_type
bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64 complex128
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert
bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp
expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf isnan less
less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or logical_xor
maximum minimum multiply negative not_equal positive pow real remainder round sign signbit
sin sinh square sqrt subtract tan tanh trunc
take __array_namespace_info__ matmul matrix_transpose tensordot vecdot
broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat reshape
roll squeeze stack tile unstack
argmax argmin nonzero searchsorted where
unique_all unique_counts unique_inverse unique_values
argsort sort
cumulative_sum max mean min prod std sum var
all any
""".split()
LINALG = """cholesky cross det diagonal eigh eigvalsh inv matmul matrix_norm matrix_power
matrix_rank matrix_transpose outer pinv qr slogdet solve svd svdvals tensordot trace vecdot
vector_norm""".split()
FFT = """fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift
ifftshift""".split()
ARRAY_OBJECT = """dtype device mT ndim shape size T __abs__ __add__ __and__
__array_namespace__ __bool__ __complex__ __dlpack__ __dlpack_device__ __eq__ __float__
__floordiv__ __ge__ __getitem__ __gt__ __index__ __int__ __invert__ __le__ __lshift__ __lt__
__matmul__ __mod__ __mul__ __ne__ __neg__ __or__ __pos__ __pow__ __rshift__ __setitem__
__sub__ __truediv__ __xor__ to_device""".split()

# ctensor has no boolean, 8/16-bit integer or unsigned types.
MISSING = {"bool", "int8", "int16", "uint8", "uint16", "uint32", "uint64"}
MISSING_OBJECT = set()


def test_namespace_is_found_and_covers_the_standard():
    t = ctensor.Tensor(np.ones(3))
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2023.12") is xp
    assert xp.__array_api_version__ == "2023.12"
    with pytest.raises(ValueError, match="2099.12"):
        t.__array_namespace__(api_version="2099.12")
    have = [n for n in STANDARD if hasattr(xp, n)]
    assert set(STANDARD) - set(have) == MISSING
    assert all(hasattr(xp.linalg, n) for n in LINALG), [n for n in LINALG if not hasattr(xp.linalg, n)]
    assert all(hasattr(xp.fft, n) for n in FFT), [n for n in FFT if not hasattr(xp.fft, n)]
    assert {n for n in ARRAY_OBJECT if not hasattr(ctensor.Tensor, n)} == MISSING_OBJECT
    total = len(STANDARD) + len(LINALG) + len(FFT) + len(ARRAY_OBJECT)
    got = len(have) + len(LINALG) + len(FFT) + len(ARRAY_OBJECT) - len(MISSING_OBJECT)
    print(f"array API 2023.12 names present: {got} of {total}")
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == xp.float64
    assert set(info.dtypes(kind="integral")) == {"int32", "int64"}


def sample(dtype, shape=(4, 5), positive=False):
    a = RNG.standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "i":
        a = np.round(a * 5)
    return a.astype(dtype)


def same(got, want, tol):
    assert isinstance(got, ctensor.Tensor), type(got)
    g = got.numpy()
    want = np.asarray(want)
    if want.dtype == bool:
        assert g.dtype == np.int32
        g = g.astype(bool)
    else:
        assert g.dtype == want.dtype, (g.dtype, want.dtype)
    assert g.shape == want.shape, (g.shape, want.shape)
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol, equal_nan=True)


UNARY = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
    "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh", "bitwise_invert": "invert",
    "ceil": "ceil", "conj": "conjugate", "cos": "cos", "cosh": "cosh", "exp": "exp",
    "expm1": "expm1", "floor": "floor", "isfinite": "isfinite", "isinf": "isinf",
    "isnan": "isnan", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
    "logical_not": "logical_not", "negative": "negative", "positive": "positive",
    "round": "rint", "sign": "sign", "signbit": "signbit", "sin": "sin", "sinh": "sinh",
    "square": "square", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh", "trunc": "trunc",
    "real": "real", "imag": "imag",
}
BINARY = {
    "add": "add", "atan2": "arctan2", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "copysign": "copysign", "divide": "divide", "equal": "equal",
    "floor_divide": "floor_divide", "greater": "greater", "greater_equal": "greater_equal",
    "hypot": "hypot", "less": "less", "less_equal": "less_equal", "logaddexp": "logaddexp",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "maximum": "maximum", "minimum": "minimum", "multiply": "multiply",
    "not_equal": "not_equal", "pow": "power", "remainder": "remainder", "subtract": "subtract",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
}


ORDERED = {"less", "less_equal", "greater", "greater_equal"}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int32", "int64"])
def test_element_wise_functions_match_numpy(dtype):
    tol = 2e-5 if dtype in ("float32", "complex64") else 1e-12
    checked = 0
    for positive in [False, True]:  # in and out of the real domains
        a = sample(dtype, positive=positive)
        b = sample(dtype, positive=positive)
        if np.dtype(dtype).kind == "i":
            b = np.where(b == 0, 3, b).astype(dtype)
        ta, tb = xp.asarray(a), xp.asarray(b)
        for ours, theirs in UNARY.items():
            with np.errstate(all="ignore"):
                try:
                    want = getattr(np, theirs)(a)
                except TypeError:
                    continue  # NumPy has no such function for this type either
                if ours in ("floor", "ceil", "trunc", "round") and np.dtype(dtype).kind == "i":
                    # The standard keeps the integer type; NumPy 2.1 returns float64.
                    assert np.array_equal(want, a)
                    want = a
                same(getattr(xp, ours)(ta), want, tol)
            checked += 1
        for ours, theirs in BINARY.items():
            if ours.startswith("bitwise_") and "shift" in ours and np.dtype(dtype).kind == "i":
                b_ = np.abs(b) % 8
                tb_ = xp.asarray(b_)
            else:
                b_, tb_ = b, tb
            if ours in ORDERED and np.dtype(dtype).kind == "c":
                # The standard leaves the order of complex numbers unspecified; ctensor
                # refuses it (NumPy orders them lexicographically).
                with pytest.raises(ctensor.Error, match="no order"):
                    getattr(xp, ours)(ta, tb_)
                continue
            with np.errstate(all="ignore"):
                try:
                    want = getattr(np, theirs)(a, b_)
                except TypeError:
                    continue
                except ValueError:
                    # NumPy refuses (integers to negative powers): so must we.
                    with pytest.raises((ctensor.Error, ValueError)):
                        getattr(xp, ours)(ta, tb_)
                    continue
                same(getattr(xp, ours)(ta, tb_), want, tol)
                # A Python number on either side stays weakly typed.
                if not ours.startswith(("bitwise", "logical")):
                    same(getattr(xp, ours)(ta, 2), getattr(np, theirs)(a, np.array(2, dtype)), tol)
            checked += 1
    assert checked > 40
    lo, hi = (-1, 1) if np.dtype(dtype).kind != "c" else (None, None)
    if lo is not None:
        a = sample(dtype)
        same(xp.clip(xp.asarray(a), lo, hi), np.clip(a, lo, hi), tol)


def test_creation_and_data_type_functions_match_numpy():
    for got, want in [
        (xp.zeros((2, 3)), np.zeros((2, 3))),
        (xp.ones(4, dtype=xp.int32), np.ones(4, np.int32)),
        (xp.full((2, 2), 1.5 + 2j), np.full((2, 2), 1.5 + 2j)),
        (xp.full((3,), 7), np.full(3, 7, np.int64)),
        (xp.eye(3, 4, k=1), np.eye(3, 4, k=1)),
        (xp.arange(2, 11, 3), np.arange(2, 11, 3, dtype=np.int64)),
        (xp.arange(0.5, 3.0, 0.5), np.arange(0.5, 3.0, 0.5)),
        (xp.linspace(0, 1, 7), np.linspace(0, 1, 7)),
        (xp.linspace(0, 1, 7, endpoint=False), np.linspace(0, 1, 7, endpoint=False)),
        (xp.tril(xp.asarray(np.arange(16.0).reshape(4, 4)), k=-1), np.tril(np.arange(16.0).reshape(4, 4), k=-1)),
        (xp.triu(xp.asarray(np.arange(16.0).reshape(4, 4))), np.triu(np.arange(16.0).reshape(4, 4))),
        (xp.zeros_like(xp.asarray(np.ones((2, 2), np.complex64))), np.zeros((2, 2), np.complex64)),
        (xp.full_like(xp.ones(3), 4.0), np.full(3, 4.0)),
        (xp.asarray([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int64)),
        (xp.asarray(2.5), np.array(2.5)),
        (xp.astype(xp.ones(3), xp.complex64), np.ones(3, np.complex64)),
    ]:
        same(got, want, 1e-12)
    gx, gy = xp.meshgrid(xp.arange(3), xp.arange(2))
    wx, wy = np.meshgrid(np.arange(3), np.arange(2))
    same(gx, wx, 0)
    same(gy, wy, 0)
    a = np.ones(3)
    t = xp.asarray(a)
    assert np.shares_memory(t.numpy(), a)
    assert not np.shares_memory(xp.asarray(a, copy=True).numpy(), a)
    with pytest.raises(ValueError):
        xp.asarray(t, dtype=xp.float32, copy=False)
    assert xp.result_type(xp.int32, xp.float32) == np.float64
    assert xp.result_type(t, xp.complex64, xp.int64) == np.complex128
    assert xp.can_cast(xp.float32, xp.float64) and not xp.can_cast(xp.float64, xp.int64)
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.iinfo(xp.int32).max == 2**31 - 1
    assert xp.isdtype(xp.float64, "real floating") and xp.isdtype(xp.int32, ("integral", "bool"))
    assert not xp.isdtype(xp.complex64, "real floating") and xp.isdtype(xp.complex64, "numeric")
    with pytest.raises(TypeError, match="bool"):
        xp.full(2, True)


def test_manipulation_statistics_searching_sets_match_numpy():
    a = sample("float64", (3, 4, 5))
    i = sample("int64", (6,))
    t, ti = xp.asarray(a), xp.asarray(i)
    cases = [
        (xp.reshape(t, (4, 15)), a.reshape(4, 15)),
        (xp.permute_dims(t, (2, 0, 1)), np.transpose(a, (2, 0, 1))),
        (xp.matrix_transpose(t), np.swapaxes(a, -1, -2)),
        (t.mT, np.swapaxes(a, -1, -2)),
        (xp.expand_dims(t, axis=1), np.expand_dims(a, 1)),
        (xp.squeeze(xp.expand_dims(t, axis=0), 0), a),
        (xp.broadcast_to(xp.asarray(a[0]), (2, 4, 5)), np.broadcast_to(a[0], (2, 4, 5))),
        (xp.concat([t, t], axis=-1), np.concatenate([a, a], axis=-1)),
        (xp.stack([t, t], axis=1), np.stack([a, a], axis=1)),
        (xp.flip(t, axis=1), np.flip(a, axis=1)),
        (xp.roll(t, 2, axis=2), np.roll(a, 2, axis=2)),
        (xp.moveaxis(t, 0, -1), np.moveaxis(a, 0, -1)),
        (xp.repeat(ti, 2), np.repeat(i, 2)),
        (xp.tile(ti, (2, 1)), np.tile(i, (2, 1))),
        (xp.take(t, xp.asarray([2, 0]), axis=1), np.take(a, [2, 0], axis=1)),
        (xp.sum(t, axis=(0, 2)), a.sum(axis=(0, 2))),
        (xp.mean(t, axis=-1, keepdims=True), a.mean(axis=-1, keepdims=True)),
        (xp.max(t, axis=1), a.max(axis=1)),
        (xp.min(t), a.min()),
        (xp.prod(t, axis=0), a.prod(axis=0)),
        (xp.std(t, axis=1, correction=1), a.std(axis=1, ddof=1)),
        (xp.var(t), a.var()),
        (xp.cumulative_sum(ti), np.cumsum(i)),
        (xp.cumulative_sum(t, axis=1, include_initial=True), np.concatenate([np.zeros((3, 1, 5)), np.cumsum(a, axis=1)], axis=1)),
        (xp.argmax(t, axis=2), np.argmax(a, axis=2)),
        (xp.argmin(t), np.argmin(a)),
        (xp.where(t > 0, t, 0.0), np.where(a > 0, a, 0.0)),
        (xp.sort(t, axis=1), np.sort(a, axis=1)),
        (xp.sort(ti, descending=True), np.sort(i)[::-1]),
        (xp.argsort(t, axis=0), np.argsort(a, axis=0, kind="stable")),
        (xp.searchsorted(xp.sort(ti), xp.asarray([0, 3])), np.searchsorted(np.sort(i), [0, 3])),
        (xp.unique_values(ti), np.unique(i)),
        (xp.all(t > -10, axis=0), np.all(a > -10, axis=0)),
        (xp.any(t > 1), np.any(a > 1)),
        (xp.vecdot(t, t), np.sum(a * a, axis=-1)),
        (xp.tensordot(t, t, axes=([1, 2], [1, 2])), np.tensordot(a, a, axes=([1, 2], [1, 2]))),
        (xp.matmul(t, xp.matrix_transpose(t)), a @ np.swapaxes(a, -1, -2)),
    ]
    for k, (got, want) in enumerate(cases):
        try:
            same(got, want, 1e-12)
        except AssertionError as e:
            raise AssertionError(f"case {k}: {e}") from None
    nz = xp.nonzero(ti)
    for g, w in zip(nz, np.nonzero(i)):
        same(g, w, 0)
    v, c = xp.unique_counts(ti)
    wv, wc = np.unique(i, return_counts=True)
    same(v, wv, 0)
    same(c, wc, 0)
    parts = xp.unstack(t, axis=1)
    assert len(parts) == 4 and np.array_equal(parts[2].numpy(), a[:, 2])
    b1, b2 = xp.broadcast_arrays(xp.asarray(a[:, :1]), t)
    same(b1, np.broadcast_to(a[:, :1], a.shape), 0)


def test_linalg_and_fft_extensions_match_numpy():
    m = sample("complex128", (5, 5))
    h = m @ m.conj().T + 5 * np.eye(5)
    th = xp.asarray(h)
    tol = 1e-10
    w, v = xp.linalg.eigh(th)
    same(w, np.linalg.eigvalsh(h), tol)
    same(xp.linalg.eigvalsh(th), np.linalg.eigvalsh(h), tol)
    same(xp.linalg.cholesky(th), np.linalg.cholesky(h), tol)
    same(xp.linalg.cholesky(th, upper=True), np.linalg.cholesky(h).conj().T, tol)
    same(xp.linalg.solve(th, xp.asarray(m)), np.linalg.solve(h, m), tol)
    same(xp.linalg.inv(th), np.linalg.inv(h), tol)
    same(xp.linalg.det(th), np.linalg.det(h), tol)
    s, ld = xp.linalg.slogdet(th)
    ws, wld = np.linalg.slogdet(h)
    same(s, ws, tol)
    same(ld, wld, tol)
    same(xp.linalg.svdvals(th), np.linalg.svd(h, compute_uv=False), tol)
    q, r = xp.linalg.qr(xp.asarray(m))
    same(xp.matmul(q, r), m, tol)
    u, sv, vh = xp.linalg.svd(xp.asarray(m))
    same(sv, np.linalg.svd(m, compute_uv=False), tol)
    same(xp.linalg.matrix_norm(th), np.linalg.norm(h), tol)
    same(xp.linalg.vector_norm(th), np.linalg.norm(h.ravel()), tol)
    same(xp.linalg.vector_norm(th, keepdims=True), np.linalg.norm(h.ravel()).reshape(1, 1), tol)
    s3 = sample("float32", (2, 3, 4))
    same(xp.linalg.vector_norm(xp.asarray(s3), axis=(0, 2), ord=1), np.abs(s3).sum(axis=(0, 2)), 1e-5)
    same(xp.linalg.trace(th), np.trace(h), tol)
    same(xp.linalg.diagonal(th, offset=1), np.diagonal(h, 1), tol)
    same(xp.linalg.outer(xp.asarray(m[0]), xp.asarray(m[1])), np.outer(m[0], m[1]), tol)
    same(xp.linalg.matrix_power(th, 3), np.linalg.matrix_power(h, 3), 1e-8)
    same(xp.linalg.matrix_rank(th), np.linalg.matrix_rank(h), 0)
    same(xp.linalg.pinv(xp.asarray(m)), np.linalg.pinv(m), 1e-8)
    same(xp.linalg.cross(xp.asarray(m[:, :3]), xp.asarray(m[:, 1:4])), np.cross(m[:, :3], m[:, 1:4]), tol)
    z = sample("complex128", (4, 6))
    r_ = sample("float64", (4, 6))
    tz, tr = xp.asarray(z), xp.asarray(r_)
    z3 = sample("complex128", (2, 4, 6))
    for got, want in [
        (xp.fft.fft(tz), np.fft.fft(z)),
        (xp.fft.ifft(tz, axis=0), np.fft.ifft(z, axis=0)),
        (xp.fft.fft(tz, n=8), np.fft.fft(z, n=8)),
        (xp.fft.fftn(tz, norm="ortho"), np.fft.fftn(z, norm="ortho")),
        (xp.fft.ifftn(tz), np.fft.ifftn(z)),
        (xp.fft.fftn(tz, s=(2, 3)), np.fft.fftn(z, s=(2, 3), axes=(-2, -1))),
        (xp.fft.ifftn(xp.asarray(z3), s=(3, 5)), np.fft.ifftn(z3, s=(3, 5), axes=(-2, -1))),
        (xp.fft.rfft(tr), np.fft.rfft(r_)),
        (xp.fft.irfft(xp.fft.rfft(tr), n=6), r_),
        (xp.fft.rfftn(tr), np.fft.rfftn(r_)),
        (xp.fft.hfft(tz), np.fft.hfft(z)),
        (xp.fft.fftshift(tr), np.fft.fftshift(r_)),
        (xp.fft.fftfreq(7, d=0.5), np.fft.fftfreq(7, d=0.5)),
        (xp.fft.rfftfreq(8), np.fft.rfftfreq(8)),
    ]:
        same(got, want, tol)


def test_linalg_on_stacks_and_the_standards_details():
    m = sample("float64", (2, 3, 4, 4))
    h = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    th = xp.asarray(h)
    same(xp.linalg.cholesky(th), np.linalg.cholesky(h), 1e-12)
    same(xp.linalg.svdvals(xp.asarray(m)), np.linalg.svd(m, compute_uv=False), 1e-12)
    q, r = xp.linalg.qr(xp.asarray(m))
    same(q @ r, m, 1e-12)
    u, s, vh = xp.linalg.svd(xp.asarray(m))
    same((u * s[..., None, :]) @ vh, m, 1e-12)
    empty = xp.linalg.cholesky(xp.zeros((0, 3, 3)))
    assert empty.shape == (0, 3, 3)
    assert xp.linalg.cholesky(xp.zeros((0, 0, 0))).shape == (0, 0, 0)
    # 2^40 empty matrices: answered at once, not one by one.
    assert xp.linalg.svdvals(xp.zeros((2**40, 0, 3))).shape == (2**40, 0)
    # vecdot keeps the type (int32 stays int32) and refuses mismatched lengths.
    i = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    same(xp.vecdot(i, i), np.array([5, 50], np.int32), 0)
    with pytest.raises(ValueError, match="vecdot"):
        xp.vecdot(i, xp.ones((2, 4), dtype=xp.int32))
    # finfo/iinfo give Python numbers; the frequencies take a dtype.
    f = xp.finfo(xp.float32)
    assert type(f.eps) is float and f.eps == float(np.finfo(np.float32).eps) and f.bits == 32
    assert type(xp.iinfo(xp.int64).max) is int
    same(xp.fft.fftfreq(5, d=0.1, dtype=xp.float32), np.fft.fftfreq(5, d=0.1).astype(np.float32), 1e-7)
    same(xp.fft.fftshift(xp.asarray(np.arange(6.0)), axes=0), np.fft.fftshift(np.arange(6.0)), 0)


def standard_only_log_softmax(x, axis=-1):
    """Code written against the standard alone, as a library would."""
    xp_ = x.__array_namespace__()
    m = xp_.max(x, axis=axis, keepdims=True)
    z = x - m
    return z - xp_.log(xp_.sum(xp_.exp(z), axis=axis, keepdims=True))


def test_code_written_against_the_standard_runs_on_tensors():
    a = sample("float64", (6, 9))
    got = standard_only_log_softmax(xp.asarray(a))
    z = a - a.max(axis=-1, keepdims=True)
    same(got, z - np.log(np.exp(z).sum(axis=-1, keepdims=True)), 1e-12)
    x32 = xp.asarray(a.astype(np.float32))
    assert standard_only_log_softmax(x32).dtype == xp.float32
