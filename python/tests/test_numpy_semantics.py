"""What a NumPy user reaches for, each compared with NumPy on the same data: NumPy's
dispatch protocols (ufuncs and functions on tensors), comparisons and masks, the number
protocols, reductions with NumPy's keywords, in-place operators, dtype arguments,
NumPy's indexing, matmul of vectors, einsum of several operands, solve on stacks,
pickling and copies."""

import copy
import operator
import pickle

import numpy as np
import pytest

import ctensor

RNG = np.random.default_rng(20261127)
NUMERIC = ["float32", "float64", "complex64", "complex128", "int32", "int64"]


def rand(shape, dtype="float64"):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return RNG.integers(-9, 10, size=shape).astype(dtype)
    a = RNG.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def same(got, want, rtol=None):
    """`got` is a Tensor equal to NumPy's `want` in shape, dtype and values."""
    assert isinstance(got, ctensor.Tensor), type(got)
    g = got.numpy()
    want = np.asarray(want)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    if rtol is None:
        rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol)


# --- NumPy's protocols ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_ufuncs_on_tensors_give_tensors_with_numpys_values(dtype):
    a = rand((3, 5), dtype)
    t = ctensor.from_numpy(a)
    b = rand((3, 5), dtype)
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind != "i":
            same(np.sqrt(t), np.sqrt(a))
            same(np.exp(t), np.exp(a))
        same(np.add(t, b), a + b)
        same(b + t, b + a)  # the ndarray on the left defers to the tensor
        same(b * t, b * a)
        same(np.multiply(t, 2.5), a * 2.5)
        same(np.negative(t), -a)
        same(np.absolute(t), np.abs(a))
        same(np.conjugate(t), np.conj(a))
        same(b @ t.T, b @ a.T)
    # Comparisons: the same truth values, as int32 0/1 masks.
    if np.dtype(dtype).kind != "c":
        m = np.less(t, b)
        assert isinstance(m, ctensor.Tensor) and m.dtype == np.int32
        assert np.array_equal(m.numpy().astype(bool), a < b)


def test_ufuncs_ctensor_lacks_run_in_numpy_on_views_and_come_back_as_tensors():
    a = rand((4, 6))
    t = ctensor.from_numpy(a)
    same(np.maximum(t, 0.0), np.maximum(a, 0.0))
    same(np.add.reduce(t, axis=0), np.add.reduce(a, axis=0))
    same(np.add.accumulate(t, axis=1), np.add.accumulate(a, axis=1))
    # A bool result comes back as a mask: it selects.
    nan = a.copy()
    nan[1, 2] = np.nan
    tn = ctensor.from_numpy(nan)
    m = np.isnan(tn)
    assert isinstance(m, ctensor.Tensor)
    assert np.array_equal(tn[m].numpy(), nan[np.isnan(nan)], equal_nan=True)
    # out= writes into the tensor's memory, which the NumPy array shares.
    r = np.add(t, 1.0, out=t)
    assert r is t
    assert np.array_equal(a, np.asarray(t)) and np.shares_memory(np.asarray(t), a)
    # An operand of a type ctensor lacks goes to NumPy; an int32 result is a tensor, a
    # uint8 one (no ctensor type) stays a NumPy array.
    i = ctensor.Tensor([7, -7, 9], dtype="int32")
    u8 = np.full(3, 2, np.uint8)
    same(np.floor_divide(i, u8), np.floor_divide(np.array([7, -7, 9], np.int32), u8))
    r = np.add(i, 1, dtype=np.uint8, casting="unsafe")
    assert isinstance(r, np.ndarray) and r.dtype == np.uint8
    assert np.array_equal(r, np.add(np.array([7, -7, 9], np.int32), 1, dtype=np.uint8, casting="unsafe"))


def test_numpy_functions_on_tensors():
    a = rand((3, 4, 5))
    t = ctensor.from_numpy(a)
    same(np.sum(t), np.sum(a))
    same(np.sum(t, axis=-1), np.sum(a, axis=-1))
    same(np.sum(t, axis=(0, -1), keepdims=True), np.sum(a, axis=(0, -1), keepdims=True))
    same(np.mean(t, 1), np.mean(a, 1))
    same(np.max(t, axis=0), np.max(a, axis=0))
    same(np.min(t), np.min(a))
    same(np.concatenate([t, t], axis=1), np.concatenate([a, a], axis=1))
    same(np.where(t > 0, t, 0.0), np.where(a > 0, a, 0.0))
    same(np.sort(t, axis=-1), np.sort(a, axis=-1))
    assert np.linalg.norm(t) == pytest.approx(np.linalg.norm(a), rel=1e-13)
    m = rand((4, 4)) + 4 * np.eye(4)
    tm = ctensor.from_numpy(m)
    same(np.linalg.solve(tm, np.ones(4)), np.linalg.solve(m, np.ones(4)))
    same(np.einsum("ij,jk,kl->il", tm, tm, tm), np.einsum("ij,jk,kl->il", m, m, m))
    h = m + m.T
    w, v = np.linalg.eigh(ctensor.from_numpy(h))
    same(w, np.linalg.eigh(h)[0])
    assert isinstance(v, ctensor.Tensor)
    # A GPU tensor is never copied to the host behind the caller's back.
    if ctensor.gpu_available():
        with pytest.raises(TypeError, match="GPU"):
            np.sort(t.to("gpu"))


# --- comparisons, masks and the number protocols --------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_comparisons_give_masks_that_select_like_numpys_booleans(dtype):
    a = rand((5, 6), dtype)
    b = rand((5, 6), dtype)
    t, u = ctensor.from_numpy(a), ctensor.from_numpy(b)
    for op in [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]:
        m = op(t, u)
        assert isinstance(m, ctensor.Tensor) and m.dtype == np.int32
        assert np.array_equal(m.numpy(), op(a, b).astype(np.int32)), op
        assert np.array_equal(t[m].numpy(), a[op(a, b)]), op
        assert np.array_equal(op(t, 0).numpy(), op(a, 0).astype(np.int32)), op
    both = (t > 0) & (u < 0)
    assert np.array_equal(t[both].numpy(), a[(a > 0) & (b < 0)])
    assert np.array_equal(t[(t > 0) | (u > 0)].numpy(), a[(a > 0) | (b > 0)])
    assert np.array_equal(t[(t > 0) ^ (u > 0)].numpy(), a[(a > 0) ^ (b > 0)])
    assert np.array_equal(t[~(t > 0)].numpy(), a[~(a > 0)])
    assert np.array_equal(t[(t > 0) & (b > 0)].numpy(), a[(a > 0) & (b > 0)])
    if np.dtype(dtype).kind == "i":
        # Of integers: NumPy's bitwise operations, run on host views.
        for op in [operator.and_, operator.or_, operator.xor]:
            assert np.array_equal(op(t, u).numpy(), op(a, b)), op
            assert np.array_equal(op(t, 6).numpy(), op(a, 6)), op
            assert np.array_equal(op(t > 0, u).numpy(), op(a > 0, b)), op
        assert np.array_equal((~t).numpy(), ~a)
        s = np.abs(b) % 5
        assert np.array_equal((t << ctensor.from_numpy(s)).numpy(), a << s)
        assert np.array_equal((t >> 1).numpy(), a >> 1)
        assert np.array_equal((t % 4).numpy(), a % 4)
    else:
        with pytest.raises(TypeError, match="not supported"):
            t & u
        with pytest.raises(TypeError, match="not supported"):
            ~t
    with pytest.raises(TypeError, match="unhashable"):
        hash(t)


def test_masks_promote_as_numpys_bool():
    a = rand((7,))
    mask_np = a > 0
    m = ctensor.from_numpy(a) > 0
    f32 = np.linspace(1, 2, 7).astype(np.float32)
    i32 = np.arange(7, dtype=np.int32)
    for got, want in [
        (m + 2, mask_np + 2),
        (2 - m, 2 - mask_np),
        (m * 2.5, mask_np * 2.5),
        (m * 1j, mask_np * 1j),
        (m * ctensor.from_numpy(f32), mask_np * f32),
        (ctensor.from_numpy(f32) * m, f32 * mask_np),
        (f32 * m, f32 * mask_np),
        (m * f32, mask_np * f32),
        (m * ctensor.from_numpy(i32), mask_np * i32),
        (m / ctensor.from_numpy(f32), mask_np / f32),
        (ctensor.from_numpy(f32) ** m, f32**mask_np),
    ]:
        same(got, want)
    assert (m.sum()).dtype == np.int64 and m.sum().item() == mask_np.sum()
    # Through NumPy's ufuncs and ctensor's functions alike, a Python number on the left
    # stays weakly typed and a mask stays a bool.
    t32 = ctensor.from_numpy(f32)
    same(np.add(m, t32), np.add(mask_np, f32))
    same(np.multiply(2.5, t32), np.multiply(2.5, f32))
    same(ctensor.power(2, t32), np.power(2, f32))
    same(ctensor.arctan2(0.5, t32), np.arctan2(0.5, f32))
    same(ctensor.less(1.5, t32), np.less(1.5, f32).astype(np.int32))


def test_number_protocols_as_numpy():
    f = ctensor.Tensor(np.array([[2.75]]))
    assert float(f) == 2.75 and int(f) == 2 and complex(f) == 2.75 + 0j and bool(f)
    assert int(ctensor.Tensor(np.array(-2.75))) == -2
    i = ctensor.Tensor(np.array(7, np.int64))
    assert int(i) == 7 and operator.index(i) == 7 and list(range(10))[i] == 7
    z = ctensor.Tensor(np.array(1 - 2j))
    assert complex(z) == 1 - 2j
    with pytest.raises(TypeError, match="imaginary"):
        float(z)
    assert not bool(ctensor.Tensor(np.zeros(1))) and bool(ctensor.Tensor(np.array([np.nan])))
    many = ctensor.Tensor(np.ones(3))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(many)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ctensor.Tensor(np.ones(0)))
    with pytest.raises(TypeError, match="one-element"):
        float(many)
    with pytest.raises(TypeError, match="0-d integer"):
        operator.index(ctensor.Tensor(np.array(2.0)))
    with pytest.raises(ValueError):
        int(ctensor.Tensor(np.array(np.inf)))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_attributes_abs_pow_real_imag(dtype):
    a = rand((3, 4), dtype)
    t = ctensor.from_numpy(a)
    assert t.size == a.size and t.itemsize == a.itemsize and t.nbytes == a.nbytes
    assert t.ndim == a.ndim and t.shape == a.shape
    assert t.dtype == a.dtype and t.dtype == dtype and np.dtype(dtype).name in repr(t)
    same(abs(t), np.abs(a))
    same(t ** 2, a ** 2)
    same(t.real, a.real)
    same(t.imag, a.imag)
    if np.dtype(dtype).kind == "c":
        # Views, as NumPy's: writing the real parts changes the complex tensor.
        t.real[...] = 0.5
        t.imag[0] = -1.0
        assert np.all(a.real == 0.5) and np.all(a[0].imag == -1.0)


def test_reductions_take_numpys_keywords():
    for dtype in ["float64", "float32", "int32", "int64", "complex128"]:
        a = rand((3, 4, 5), dtype)
        t = ctensor.from_numpy(a)
        for axis in [None, 0, -1, (0, 2), (-1, -3), 1]:
            for keepdims in [False, True]:
                same(t.sum(axis=axis, keepdims=keepdims), a.sum(axis=axis, keepdims=keepdims))
                same(t.mean(axis=axis, keepdims=keepdims), a.mean(axis=axis, keepdims=keepdims))
                if np.dtype(dtype).kind != "c":
                    same(t.max(axis=axis, keepdims=keepdims), a.max(axis=axis, keepdims=keepdims))
                    same(t.min(axis, keepdims=keepdims), a.min(axis, keepdims=keepdims))
        same(t.sum(axis=1, dtype=np.float64), a.sum(axis=1, dtype=np.float64))
    a = rand((3, 4))
    t = ctensor.from_numpy(a)
    assert (t > 5).any() is False and (t > -99).all() is True
    with pytest.raises(IndexError, match="out of bounds"):
        t.sum(axis=2)
    with pytest.raises(IndexError, match="out of bounds"):
        t.sum(axis=-3)
    with pytest.raises(ValueError, match="duplicate"):
        t.sum(axis=(0, -2))
    with np.errstate(all="ignore"):
        assert np.isnan(ctensor.Tensor(np.ones((0, 3))).mean().item())


# --- in-place operators ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC)
def test_in_place_operators_write_into_the_shared_memory(dtype):
    a = rand((4, 5), dtype)
    want = a.copy()
    t = ctensor.from_numpy(a)
    before = t
    t += 1
    want += 1
    t *= 2
    want *= 2
    t -= ctensor.from_numpy(np.ones(5, dtype))  # broadcast right-hand side
    want -= np.ones(5, dtype)
    if np.dtype(dtype).kind != "i":
        t /= 3
        want /= 3
        t **= 2
        want **= 2
    if np.dtype(dtype).kind != "c":
        t //= 2
        want //= 2
    assert t is before
    np.testing.assert_allclose(a, want, rtol=1e-5 if a.dtype in (np.float32, np.complex64) else 1e-12)
    # Aliasing: the right-hand side is the same memory, transposed.
    s = rand((4, 4), dtype)
    ts = ctensor.from_numpy(s)
    ts += ts.T
    np.testing.assert_allclose(s, np.asarray(ctensor.from_numpy(s)))
    want = rand((4, 4), dtype)
    tw = ctensor.Tensor(want)
    tw += tw.T
    np.testing.assert_allclose(tw.numpy(), want + want.T, rtol=1e-6)


def test_in_place_operators_refuse_what_numpy_refuses():
    i = ctensor.Tensor(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    with pytest.raises(TypeError, match="same_kind"):
        i /= 2
    f = ctensor.Tensor(np.ones(3))
    with pytest.raises(TypeError, match="same_kind"):
        f += 1j
    with pytest.raises(ValueError, match="shape"):
        f += np.ones((2, 3))
    g = ctensor.Tensor(np.ones(3, np.float32))
    g += np.ones(3)  # float64 into float32: same kind, as NumPy allows
    assert g.dtype == np.float32 and np.array_equal(g.numpy(), np.full(3, 2.0, np.float32))
    assert np.array_equal(i.numpy(), np.arange(3))  # nothing was written by the refusals


# --- dtype arguments ------------------------------------------------------------------


def test_dtype_arguments_as_numpy_takes_them():
    for spec, want in [
        (np.float32, "float32"),
        (np.dtype("c16"), "complex128"),
        ("f8", "float64"),
        ("c8", "complex64"),
        ("i4", "int32"),
        (np.int64, "int64"),
        ("float16", "float16"),
        ("f64", "float64"),
        (float, "float64"),
        (complex, "complex128"),
    ]:
        assert ctensor.zeros((2, 3), dtype=spec).dtype == np.dtype(want), spec
        assert ctensor.zeros(4, dtype=spec).dtype == want, spec
        assert ctensor.Tensor([1, 2], dtype=spec).dtype == want, spec
        assert ctensor.eye(2, dtype=spec).dtype == want, spec
        assert ctensor.Tensor(np.ones(2)).astype(spec).dtype == want, spec
    assert ctensor.result_type(np.int32, "float32") == np.float64
    assert ctensor.result_type(ctensor.zeros(1, "int64"), np.complex64) == np.complex128
    with pytest.raises(ctensor.Error, match="uint8 .*has no ctensor type"):
        ctensor.zeros(2, dtype=np.uint8)
    with pytest.raises(ctensor.Error, match="unknown data type"):
        ctensor.zeros(2, dtype="nonsense")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    b = ctensor.zeros(2, dtype=ml_dtypes.bfloat16)
    assert b.dtype == ml_dtypes.bfloat16 and "bfloat16" in repr(b)


# --- indexing -------------------------------------------------------------------------


def keys_for(shape):
    n0 = shape[0]
    return [
        np.int64(1),
        np.int32(-1),
        (np.intp(2), slice(None)),
        Ellipsis,
        (Ellipsis, 1),
        (1, Ellipsis),
        (Ellipsis, slice(1, 3), 0),
        None,
        (None, 0),
        (slice(None), None, 2),
        (Ellipsis, None),
        slice(None, None, 2),
        (slice(1, None, 3), slice(None, None, 2)),
        (slice(None), slice(5, 0, -2)),
        slice(None, None, -1),
        (slice(None, None, -1), Ellipsis, slice(None, None, -2)),
        [2, 0, 2],
        np.array([-1, 0]),
        (slice(None), [1, 1, 3]),
        (Ellipsis, np.array([[0, 2], [1, 1]])),
        (1, [0, 2]),
        [],
        np.arange(n0) % 2 == 0,
        (slice(None), np.array([True, False, True, False, True, True, False])),
        slice(100, 200),
        (slice(None, None, 7), 0),
    ]


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int32"])
def test_indexing_matches_numpy_views_where_numpy_gives_views(dtype):
    a = rand((5, 7, 4), dtype)
    t = ctensor.from_numpy(a)
    for key in keys_for(a.shape):
        want = a[key]
        got = t[key]
        g = got.numpy()
        assert g.shape == want.shape and np.array_equal(g, want), key
        assert g.dtype == want.dtype, key
        parts = key if isinstance(key, tuple) else (key,)
        reversed_ = any(isinstance(k, slice) and (k.step or 1) < 0 for k in parts)
        if want.size:
            # A view exactly where NumPy's is one, except reversed slices (copies here).
            assert np.shares_memory(g, a) == (np.shares_memory(want, a) and not reversed_), key
    # 2-D boolean mask over the first two axes.
    m = a.real[..., 0] > 0 if np.dtype(dtype).kind != "i" else a[..., 0] > 0
    assert np.array_equal(t[m].numpy(), a[m])
    # NumPy integers as indices in a loop.
    for i in np.arange(a.shape[0]):
        assert np.array_equal(t[i].numpy(), a[i])
    # Reversed slices are copies here (ctensor's strides are never negative).
    assert not np.shares_memory(t[::-1].numpy(), a)


def test_indexing_errors_and_assignment():
    a = rand((5, 6))
    t = ctensor.from_numpy(a)
    for key, err, msg in [
        ((0, 0, 0), IndexError, "too many"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (6, IndexError, "out of range"),
        ([0, 9], IndexError, "out of range"),
        (np.array([True, False]), IndexError, "boolean index"),
        (np.array([0.5]), IndexError, "integers or booleans"),
        (([0], [1]), IndexError, "one integer or boolean array"),
        (True, IndexError, "True/False"),
        ("a", TypeError, "indices are"),
    ]:
        with pytest.raises(err, match=msg):
            t[key]
    # Assignment through step views writes through, as NumPy's.
    want = a.copy()
    t[::2, 1::3] = -1.0
    want[::2, 1::3] = -1.0
    t[..., 0] = np.arange(5.0)
    want[..., 0] = np.arange(5.0)
    t[None, 1] = 9.0
    want[None, 1] = 9.0
    assert np.array_equal(a, want)
    assert np.array_equal(a, want)


@pytest.mark.parametrize("dtype", ["float64", "complex64", "int32"])
def test_assignment_through_masks_index_arrays_and_reversed_slices_as_numpy(dtype):
    a = rand((5, 6), dtype)
    want = a.copy()
    t = ctensor.from_numpy(a)
    # The idiom: clip through a comparison's mask.
    m = (t.real < 0) if np.dtype(dtype).kind == "c" else (t < 0)
    t[m] = 0
    want[(want.real < 0) if np.dtype(dtype).kind == "c" else (want < 0)] = 0
    for key, value in [
        ([0, 3], 7),
        ((slice(None), [1, 4]), np.arange(5).reshape(5, 1)),
        (np.array([4, -1, 0]), np.ones(6, dtype)),
        (slice(None, None, -2), rand((3, 6), dtype)),
        ((Ellipsis, slice(4, 0, -1)), 2),
        (np.arange(5) % 2 == 1, 5),
        ((a.real > 1) if np.dtype(dtype).kind == "c" else (a > 1), 9),
    ]:
        t[key] = value
        want[key] = value
        assert np.array_equal(a, want), key
    # The value may be a tensor, a view of the same memory included.
    t[[1, 2]] = ctensor.Tensor(want[[2, 1]])
    want[[1, 2]] = want[[2, 1]].copy()
    t[::-1] = t
    want[::-1] = want.copy()
    assert np.array_equal(a, want)
    # ctensor's refusals hold: nothing of a higher kind, nothing out of range.
    if np.dtype(dtype).kind != "c":
        with pytest.raises(ctensor.Error, match="cannot be stored"):
            t[[0]] = 1.5j
        with pytest.raises(ctensor.Error, match="cannot be stored"):
            t[::-1] = np.ones(6, np.complex128)
    if np.dtype(dtype).kind == "i":
        with pytest.raises(ctensor.Error, match="cannot be stored"):
            t[t > 0] = 0.5
        with pytest.raises(OverflowError):
            t[[0]] = 2**40
    assert np.array_equal(a, want)
    with pytest.raises(IndexError, match="9 is out of (range|bounds)"):
        t[[9]] = 0


# --- matmul, einsum, solve ------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64"])
def test_matmul_of_vectors_as_numpy(dtype):
    m, v, w = rand((3, 4), dtype), rand((4,), dtype), rand((3,), dtype)
    s = rand((2, 3, 4), dtype)
    tm, tv, tw, ts = (ctensor.from_numpy(x) for x in (m, v, w, s))
    same(tm @ tv, m @ v)
    same(tw @ tm, w @ m)
    same(tv @ tv, v @ v)
    same(ts @ tv, s @ v)
    same(w @ ts, w @ s)
    same(ctensor.matmul(v, m.T), v @ m.T)
    same(m @ tv, m @ v)  # NumPy array on the left
    with pytest.raises(ctensor.Error, match="rank 1 or more"):
        tm @ ctensor.Tensor(np.array(2.0, dtype))
    with pytest.raises(ctensor.Error):
        tv @ ctensor.from_numpy(w)


def test_einsum_of_three_and_four_operands_as_numpy():
    a, b, c, d = rand((3, 4)), rand((4, 5), "complex128"), rand((5, 2)), rand((2, 6), "float32")
    for eq, ops in [
        ("ij,jk,kl->il", (a, b, c)),
        ("ij,jk,kl", (a, b, c)),
        ("ij,jk,kl,lm->mi", (a, b, c, d)),
        ("i,i,i->", (a[0], a[1], a[2])),
        ("ij,kl,jl->ik", (a, rand((2, 5)), rand((4, 5)))),
        ("...ij,...jk,...kl->...il", (rand((2, 3, 4)), rand((2, 4, 5)), rand((2, 5, 3)))),
    ]:
        same(ctensor.einsum(eq, *[ctensor.from_numpy(x) for x in ops]), np.einsum(eq, *ops), rtol=1e-5)


def test_solve_on_stacks_and_mixed_dtypes_as_numpy():
    a = rand((2, 3, 4, 4)) + 4 * np.eye(4)
    for b in [rand((4,)), rand((2, 3, 4, 2)), rand((3, 4, 1)), rand((5, 1, 1, 4, 2))]:
        same(ctensor.solve(a, b), np.linalg.solve(a, b), rtol=1e-10)
    a32 = (rand((4, 4)) + 4 * np.eye(4)).astype(np.float32)
    for b in [rand((4, 3)), rand((4,), "complex64"), rand((4,), "int32")]:
        want = np.linalg.solve(a32, b)
        same(ctensor.solve(a32, b), want, rtol=1e-4)
    ai = (np.eye(3) * 2).astype(np.int64)
    same(ctensor.solve(ai, np.ones(3, np.int64)), np.linalg.solve(ai, np.ones(3, np.int64)))
    with pytest.raises(ctensor.Error, match="do not broadcast"):
        ctensor.solve(a, rand((4, 4, 2)))


# --- pickling and copies --------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC + ["float16"])
def test_pickle_and_copies_keep_values_type_and_shape(dtype):
    a = rand((3, 4), dtype)
    t = ctensor.from_numpy(a).T  # a view: pickled as its values
    for back in [pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)]:
        assert back.dtype == t.dtype and back.shape == t.shape and back.device == t.device
        assert np.array_equal(back.numpy(), a.T)
        assert not np.shares_memory(back.numpy(), a)
    m = pickle.loads(pickle.dumps(ctensor.from_numpy(a.real) > 0))
    assert np.array_equal(ctensor.from_numpy(a)[m].numpy(), a[a.real > 0])
    empty = pickle.loads(pickle.dumps(ctensor.zeros((0, 5), dtype=dtype)))
    assert empty.shape == (0, 5) and empty.dtype == dtype


def test_pickle_of_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = ctensor.Tensor(np.arange(6.0).reshape(2, 3)).astype(ml_dtypes.bfloat16)
    back = pickle.loads(pickle.dumps(t))
    assert back.dtype == ml_dtypes.bfloat16
    assert np.array_equal(back.astype("float32").numpy(), np.arange(6.0).reshape(2, 3))
