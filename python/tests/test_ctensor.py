"""The Python package against NumPy and SciPy on the same data: zero-copy exchange
(pointer equality), every dtype, layouts NumPy makes, operators with NumPy's promotion,
the linear algebra and FFTs, .npy files, errors as exceptions, and the GIL released
during long operations. Run by `make test` (scripts/py-test.sh)."""
import threading

import numpy as np
import pytest
import scipy.linalg

import ctensor

RNG = np.random.default_rng(20261123)
DTYPES = ["float32", "float64", "int32", "int64", "complex64", "complex128", "float16"]
SIZES = [1, 2, 7, 33, 300]


def rand(shape, dtype="float64"):
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return RNG.integers(-1000, 1000, shape).astype(dtype)
    x = RNG.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def hermitian(n, dtype="complex128"):
    a = rand((n, n), dtype)
    return (a + a.conj().T) / 2


def tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


# ---- zero-copy exchange -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_round_trip_shares_memory(dtype):
    a = rand((3, 5), dtype)
    t = ctensor.from_numpy(a)
    assert t.dtype == dtype and t.shape == (3, 5) and t.device == "cpu"
    b = t.numpy()
    assert b.ctypes.data == a.ctypes.data, "numpy -> ctensor -> numpy copied"
    assert b.dtype == a.dtype and np.array_equal(b, a)
    c = np.from_dlpack(t)
    assert c.ctypes.data == a.ctypes.data
    # A write on either side is seen on the other.
    a[1, 2] = 7
    assert t.numpy()[1, 2] == 7


def test_layouts_numpy_makes_are_viewed_not_copied():
    a = rand((6, 8))
    for view in [a.T, a[::2, 1:], np.asfortranarray(a), a[3], a[:, 5]]:
        t = ctensor.from_numpy(view)
        assert t.strides == tuple(s // 8 for s in view.strides)
        b = t.numpy()
        assert b.ctypes.data == view.ctypes.data and np.array_equal(b, view)


def test_layouts_ctensor_cannot_view_are_errors_and_copies_work():
    a = rand((4, 4))
    with pytest.raises(ctensor.Error, match="strides >= 0"):
        ctensor.from_numpy(a[::-1])
    t = ctensor.Tensor(a[::-1])
    assert np.array_equal(t.numpy(), a[::-1])
    assert t.numpy().ctypes.data != a.ctypes.data
    bcast = np.broadcast_to(np.arange(3.0), (4, 3))
    with pytest.raises(ctensor.Error, match="twice"):
        ctensor.from_numpy(bcast)


def test_read_only_arrays_stay_read_only():
    a = rand((5,))
    a.flags.writeable = False
    t = ctensor.from_numpy(a)
    assert np.array_equal(t.numpy(), a)
    assert not t.numpy().flags.writeable, "the READ_ONLY flag travels back to NumPy"
    # Results of operations are new, writable tensors.
    assert np.array_equal((t * 2).numpy(), a * 2)


def test_memory_outlives_the_exporter():
    a = rand((100,))
    keep = a.copy()
    t = ctensor.from_numpy(a)
    del a
    assert np.array_equal(t.numpy(), keep)
    b = ctensor.Tensor([1.0, 2.0, 3.0]).numpy()
    assert np.array_equal(b, [1.0, 2.0, 3.0])  # the tensor is gone, the array holds it


def test_tensor_copies_and_casts():
    a = rand((2, 3), "int32")
    t = ctensor.Tensor(a, dtype="complex64")
    assert t.dtype == "complex64" and np.array_equal(t.numpy(), a.astype(np.complex64))
    assert t.numpy().ctypes.data != a.ctypes.data
    assert ctensor.Tensor([[1, 2], [3, 4]]).dtype == "int64"
    assert t.astype("float64").dtype == "float64"
    assert ctensor.zeros((2, 0, 3), "float32").shape == (2, 0, 3)


def test_bfloat16_is_refused_by_numpy_with_a_hint():
    t = ctensor.zeros((2,), "bfloat16")
    with pytest.raises(TypeError, match="astype"):
        t.numpy()


# ---- operators and promotion ------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_operators_match_numpy(n):
    a, b = rand((n, 3)), rand((n, 3), "complex128")
    ta, tb = ctensor.from_numpy(a), ctensor.from_numpy(b)
    for got, want in [
        (ta + tb, a + b), (ta - tb, a - b), (ta * tb, a * b), (ta / (tb + 3), a / (b + 3)),
        (2 * ta, 2 * a), (ta * 2, a * 2), (1 - ta, 1 - a), (ta - 1, a - 1), (-tb, -b),
        (ta + a, a + a), (a.T @ ta, a.T @ a), (ta.T @ tb, a.T @ b), (ta / 4.0, a / 4.0),
        (3.0 / (ta * ta + 1), 3.0 / (a * a + 1)),
    ]:
        assert got.dtype == want.dtype.name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_scalars_promote_weakly_as_numpy_2():
    f = ctensor.Tensor(np.ones(3, np.float32))
    i = ctensor.Tensor(np.ones(3, np.int32))
    assert (f * 2.0).dtype == "float32"
    assert (f + 1j).dtype == "complex64"
    assert (i + 1).dtype == "int32"
    assert (i * 0.5).dtype == "float64"
    assert (f + ctensor.Tensor(np.ones(3))).dtype == "float64"


NUMPY_TYPES = ["int32", "int64", "float16", "float32", "float64", "complex64", "complex128"]


def test_promotion_between_tensors_is_numpy_2s():
    """Every pair of NumPy's types against np.result_type, through ctensor.result_type and
    through the operators themselves (an integer with float32 is float64, not float32)."""
    for a in NUMPY_TYPES:
        for b in NUMPY_TYPES:
            want = np.result_type(np.dtype(a), np.dtype(b)).name
            assert ctensor.result_type(a, b) == want, (a, b)
            x, y = np.ones(3, a), np.full(3, 2, b)
            tx, ty = ctensor.Tensor(x), ctensor.Tensor(y)
            for got, ref in [(tx + ty, x + y), (tx * ty, x * y), (tx - ty, x - y)]:
                assert got.dtype == ref.dtype.name == want, (a, b)
                np.testing.assert_array_equal(got.numpy(), ref)
            got, ref = tx / ty, x / y
            assert got.dtype == ref.dtype.name, ("/", a, b)
            np.testing.assert_allclose(got.numpy(), ref, rtol=1e-3)
    # bfloat16 (ml_dtypes): NumPy's rule where ml_dtypes has one, float16's elsewhere.
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for b in ["float32", "float64", "complex64", "complex128"]:
        want = np.result_type(ml_dtypes.bfloat16, np.dtype(b)).name
        assert ctensor.result_type("bfloat16", b) == want, b
    assert ctensor.result_type("bfloat16", "int32") == "float64"
    assert ctensor.result_type("bfloat16", "float16") == "float32"
    # matmul, einsum and solve promote so too.
    a, b = rand((4, 4), "int32"), rand((4, 4), "float32")
    for got, ref in [(ctensor.matmul(a, b), a @ b), (ctensor.from_numpy(a) @ b, a @ b),
                     (ctensor.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))]:
        assert got.dtype == ref.dtype.name == "float64"
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    x = ctensor.solve(a + 10 * np.eye(4, dtype=np.int32), b)
    assert x.dtype == "float64"


def test_numpy_scalars_promote_as_arrays_python_numbers_weakly():
    f = ctensor.Tensor(np.ones(3, np.float32))
    for s in [np.float64(2.5), np.complex128(1j), np.int64(3), np.float32(2), np.float16(2)]:
        want = (np.ones(3, np.float32) * s).dtype.name
        assert (f * s).dtype == want, type(s)
        assert (s * f).dtype == want, type(s)
    i = ctensor.Tensor(np.ones(3, np.int32))
    assert (i + np.int64(1)).dtype == "int64"
    assert (i + 1).dtype == "int32" and (i + True).dtype == "int32"
    assert (f * 2.5).dtype == "float32" and (f * 2.5j).dtype == "complex64"
    t = ctensor.Tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="boolean"):
        t[True]
    with pytest.raises(IndexError, match="boolean"):
        t[0, False]


def test_division_is_true_division_and_floor_division_floors():
    a = np.array([1, 7, -7, 0], np.int32)
    t = ctensor.Tensor(a)
    for got, ref in [(t / 2, a / 2), (2 / (t + 10), 2 / (a + 10)), (t / t[:1], a / a[:1]),
                     (t / np.int64(2), a / np.int64(2)), (t / 2.0, a / 2.0)]:
        assert got.dtype == ref.dtype.name == "float64"
        np.testing.assert_array_equal(got.numpy(), ref)
    b = np.array([2, -2, 3, -3], np.int32)
    for got, ref in [(t // 2, a // 2), (t // -2, a // -2), (t // ctensor.Tensor(b), a // b),
                     (7 // ctensor.Tensor(b), 7 // b), (ctensor.Tensor(a.astype(np.int64)) // b,
                                                        a.astype(np.int64) // b)]:
        assert got.dtype == ref.dtype.name
        np.testing.assert_array_equal(got.numpy(), ref)
    with pytest.raises(ctensor.Error, match="floor_divide"):
        ctensor.Tensor(np.ones(2, np.complex128)) // 2
    with pytest.raises(ctensor.Error, match="zero"):
        t // 0


def test_floor_division_of_floats_matches_numpy():
    """NumPy's rule (the exact fmod remainder, then the quotient rounded): on random values,
    exact multiples, signed zeros, infinities, NaN and zero divisors, both float types."""
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, np.inf, -np.inf, np.nan, 0.1, 1e30])
    for dtype in [np.float64, np.float32]:
        x = np.concatenate([rng.uniform(-50, 50, 301), np.repeat(special, len(special)),
                            [6.0, -6.0, 0.3, -0.3]]).astype(dtype)
        y = np.concatenate([rng.uniform(-5, 5, 301), np.tile(special, len(special)),
                            [3.0, 3.0, 0.1, 0.1]]).astype(dtype)
        with np.errstate(all="ignore"):
            want = np.floor_divide(x, y)
            for got in [ctensor.Tensor(x) // ctensor.Tensor(y), ctensor.Tensor(x) // y,
                        x // ctensor.Tensor(y)]:
                assert got.dtype == np.dtype(dtype).name
                np.testing.assert_array_equal(got.numpy(), want)
                assert np.array_equal(np.signbit(got.numpy()), np.signbit(want))
            np.testing.assert_array_equal((ctensor.Tensor(x) // 2.5).numpy(), x // dtype(2.5))


def test_integers_out_of_a_tensors_range_raise_overflow_as_numpy_2():
    i = ctensor.Tensor(np.array([1, -7], np.int32))
    for op in [lambda x, n: x + n, lambda x, n: x - n, lambda x, n: n - x, lambda x, n: x * n,
               lambda x, n: x // n]:
        for n in [2**31, -(2**31) - 1, 2**40]:
            with pytest.raises(OverflowError):
                op(np.array([1, -7], np.int32), n)
            with pytest.raises(OverflowError, match=str(n)):
                op(i, n)
            with pytest.raises(ctensor.Error):
                op(i, n)
    assert issubclass(ctensor.OverflowError, OverflowError)
    assert issubclass(ctensor.OverflowError, ctensor.Error)
    np.testing.assert_array_equal((i + (2**31 - 8)).numpy(), np.array([1, -7], np.int32) + (2**31 - 8))
    with pytest.raises(OverflowError):
        i[0] = 2**40
    with pytest.raises(OverflowError):
        i[0] = 2**70  # beyond int64 as well
    assert i.numpy()[0] == 1, "nothing was written"
    i[0] = -(2**31)
    assert i.numpy()[0] == -(2**31)
    wide = ctensor.Tensor(np.array([1], np.int64))
    assert (wide + 2**40).numpy()[0] == 2**40 + 1


def test_writes_between_two_imports_of_one_array_see_the_overlap():
    m = np.arange(36.0).reshape(6, 6)
    want = m.copy()
    want[1:, 1:] = want[:-1, :-1]  # NumPy reads the source before writing
    t = ctensor.from_numpy(m)
    t[1:, 1:] = m[:-1, :-1]  # m[:-1, :-1] is a second import of the same memory
    np.testing.assert_array_equal(m, want)
    m = np.arange(36.0).reshape(6, 6)
    want = m.copy()
    want[:-1, :-1] = want[1:, 1:]
    ctensor.from_numpy(m)[:-1, :-1] = ctensor.from_numpy(m)[1:, 1:]
    np.testing.assert_array_equal(m, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_item_gives_the_python_number_for_every_dtype(dtype):
    a = rand((1, 1), dtype)
    got = ctensor.Tensor(a).item()
    want = a.item()
    assert type(got) is type(want) and got == want, (dtype, got, want)
    assert ctensor.zeros((), "bfloat16").item() == 0.0
    with pytest.raises(ctensor.Error, match="one element"):
        ctensor.Tensor(rand((2,), dtype)).item()


def test_einsum_and_matmul_match_numpy():
    a, b = rand((7, 33), "complex128"), rand((33, 5), "complex128")
    ta, tb = ctensor.from_numpy(a), ctensor.from_numpy(b)
    np.testing.assert_allclose(ctensor.matmul(ta, tb).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_allclose(
        ctensor.einsum("ij,jk->ik", ta.conj(), b).numpy(), a.conj() @ b, rtol=1e-12)
    np.testing.assert_allclose(
        ctensor.einsum("ii->", a[:, :7]).numpy(), np.trace(a[:, :7]), rtol=1e-12)
    s = rand((4, 7, 5))
    np.testing.assert_allclose(ctensor.einsum("bij->bji", s).numpy(), s.transpose(0, 2, 1))
    assert ctensor.Tensor(a).sum().item() == pytest.approx(a.sum())


# ---- linear algebra ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
@pytest.mark.parametrize("n", [1, 7, 57])
def test_eigh_matches_scipy(dtype, n):
    a = hermitian(n, dtype) if np.dtype(dtype).kind == "c" else hermitian(n, "float64").real.astype(dtype)
    w, v = ctensor.eigh(a)
    w, v = w.numpy(), v.numpy()
    ws = scipy.linalg.eigh(a, eigvals_only=True)
    np.testing.assert_allclose(w, ws, atol=tol(dtype) * max(1, abs(ws).max()) * 10)
    res = a @ v - v * w
    assert np.abs(res).max() < tol(dtype) * 100 * max(1, abs(ws).max())


def test_eigh_ranges_match_scipy():
    a = hermitian(60)
    ws = scipy.linalg.eigh(a, eigvals_only=True)
    w, v = ctensor.eigh(a, subset_by_index=(3, 9))
    np.testing.assert_allclose(w.numpy(), ws[3:10], atol=1e-10)
    assert v.shape == (60, 7)
    lo, hi = (ws[10] + ws[11]) / 2, (ws[20] + ws[21]) / 2
    w = ctensor.eigh(a, subset_by_value=(lo, hi), eigvals_only=True)
    np.testing.assert_allclose(w.numpy(), ws[11:21], atol=1e-10)
    with pytest.raises(ValueError):
        ctensor.eigh(a, subset_by_index=(0, 1), subset_by_value=(0, 1))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigh_drivers_match_scipy(dtype):
    a = hermitian(120, dtype) if dtype == "complex128" else hermitian(120, "float64").real
    ws = scipy.linalg.eigh(a, eigvals_only=True)
    scale = abs(ws).max()
    for driver in [None, "auto", "evd", "evr", "faer"]:
        w, v = ctensor.eigh(a, subset_by_index=(0, 9), driver=driver)
        np.testing.assert_allclose(w.numpy(), ws[:10], atol=1e-12 * scale, err_msg=str(driver))
        assert v.shape == (120, 10)
    # Mixed precision: eigenvalues only, within its checked tolerance (1e-9 of the norm).
    w = ctensor.eigh(a, subset_by_index=(0, 9), eigvals_only=True, driver="mixed").numpy()
    np.testing.assert_allclose(w, ws[:10], atol=1e-9 * scale)
    with pytest.raises(Exception, match="eigvalsh"):
        ctensor.eigh(a, subset_by_index=(0, 9), driver="mixed")
    with pytest.raises(ValueError, match="expected None"):
        ctensor.eigh(a, driver="ev")
    with pytest.raises(ValueError, match="generalized"):
        ctensor.eigh(a, np.eye(120), driver="evr")


def test_eigh_reads_only_the_lower_triangle():
    a = hermitian(9)
    poisoned = np.tril(a) + np.triu(np.full((9, 9), np.nan), 1)
    w = ctensor.eigh(poisoned, eigvals_only=True).numpy()
    np.testing.assert_allclose(w, scipy.linalg.eigh(a, eigvals_only=True), atol=1e-10)


def test_generalized_eigh_matches_scipy():
    a = hermitian(40)
    m = rand((40, 40), "complex128")
    b = m @ m.conj().T + 40 * np.eye(40)
    w, v = ctensor.eigh(a, b, subset_by_index=(0, 4))
    ws = scipy.linalg.eigh(a, b, eigvals_only=True)
    np.testing.assert_allclose(w.numpy(), ws[:5], atol=1e-10)
    v = v.numpy()
    np.testing.assert_allclose(a @ v, b @ v * w.numpy(), atol=1e-9)


def test_cholesky_solve_qr_svd_match_numpy():
    m = rand((33, 33), "complex128")
    spd = m @ m.conj().T + 33 * np.eye(33)
    np.testing.assert_allclose(ctensor.cholesky(spd).numpy(), np.linalg.cholesky(spd), atol=1e-10)
    u = ctensor.cholesky(spd, lower=False).numpy()
    np.testing.assert_allclose(u.conj().T @ u, spd, atol=1e-9)
    b = rand((33, 4), "complex128")
    np.testing.assert_allclose(ctensor.solve(m, b).numpy(), np.linalg.solve(m, b), atol=1e-9)
    a = rand((40, 7))
    q, r = (x.numpy() for x in ctensor.qr(a))
    assert q.shape == (40, 7) and r.shape == (7, 7)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(q.T @ q, np.eye(7), atol=1e-12)
    assert np.allclose(np.tril(r, -1), 0)
    np.testing.assert_allclose(abs(np.diag(r)), abs(np.diag(np.linalg.qr(a, mode="r"))), atol=1e-12)
    q, r = ctensor.qr(a, mode="complete")
    assert q.shape == (40, 40)
    assert ctensor.qr(a, mode="r").shape == (7, 7)
    u, s, vh = (x.numpy() for x in ctensor.svd(a, full_matrices=False))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    np.testing.assert_allclose(u * s @ vh, a, atol=1e-12)
    np.testing.assert_allclose(ctensor.svd(a, compute_uv=False).numpy(), s, atol=1e-12)
    assert ctensor.svd(a)[0].shape == (40, 40)


def test_singular_and_non_finite_input_are_errors():
    with pytest.raises(ctensor.Error, match="positive definite"):
        ctensor.cholesky(-np.eye(3))
    with pytest.raises(ctensor.Error):
        ctensor.solve(np.zeros((3, 3)), np.ones(3))
    with pytest.raises(ctensor.Error, match="finite"):
        ctensor.eigh(np.full((3, 3), np.nan))


# ---- FFT ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(1,), (15,), (16,), (60,), (7, 5), (3, 4, 5)])
def test_fft_matches_numpy(shape):
    x = rand(shape, "complex128")
    np.testing.assert_allclose(ctensor.fftn(x).numpy(), np.fft.fftn(x), atol=1e-10)
    np.testing.assert_allclose(ctensor.ifftn(x).numpy(), np.fft.ifftn(x), atol=1e-12)
    np.testing.assert_allclose(ctensor.fft(x).numpy(), np.fft.fft(x), atol=1e-10)
    np.testing.assert_allclose(ctensor.ifft(x, axis=0).numpy(), np.fft.ifft(x, axis=0), atol=1e-12)
    for norm in ["ortho", "forward"]:
        np.testing.assert_allclose(
            ctensor.fftn(x, norm=norm).numpy(), np.fft.fftn(x, norm=norm), atol=1e-10)
    if len(shape) > 1:
        np.testing.assert_allclose(
            ctensor.fftn(x, axes=[-1, 0]).numpy(), np.fft.fftn(x, axes=[-1, 0]), atol=1e-10)
    r = rand(shape, "float32")
    got = ctensor.fftn(r)
    assert got.dtype == "complex64"
    np.testing.assert_allclose(got.numpy(), np.fft.fftn(r), atol=1e-3)


# ---- files, errors, threads, devices ----------------------------------------------------


def test_npy_files_both_ways(tmp_path):
    a = np.asfortranarray(rand((4, 6), "complex64"))
    ctensor.save_npy(tmp_path / "a.npy", a)
    b = np.load(tmp_path / "a.npy")
    assert b.flags.f_contiguous and np.array_equal(b, a)
    np.save(tmp_path / "c.npy", rand((3, 3), "int64"))
    t = ctensor.load_npy(tmp_path / "c.npy")
    assert np.array_equal(t.numpy(), np.load(tmp_path / "c.npy"))
    with pytest.raises(ctensor.Error, match="nope.npy"):
        ctensor.load_npy(tmp_path / "nope.npy")


def test_errors_carry_ctensors_message():
    t = ctensor.Tensor(np.ones((2, 3)))
    with pytest.raises(ctensor.Error, match=r"shapes \[2, 3\] and \[4, 5\] do not broadcast"):
        t + np.ones((4, 5))
    with pytest.raises(ctensor.Error, match="float128 .*has no ctensor type"):
        t.astype("float128")
    with pytest.raises(ctensor.Error, match="unknown device"):
        t.to("tpu")
    with pytest.raises(ValueError, match="norm"):
        ctensor.fftn(t, norm="both")
    assert issubclass(ctensor.Error, Exception)


def test_long_operations_release_the_gil():
    """A Python thread keeps running while eigh works: with the GIL held it would get at
    most a switch interval or two of the call's time; released, a large share of it."""
    import sys
    import time

    a = hermitian(600)
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    th = threading.Thread(target=spin)
    th.start()
    try:
        t0, k0 = time.perf_counter(), ticks[0]
        time.sleep(0.2)  # the spinner alone: its rate
        rate = (ticks[0] - k0) / (time.perf_counter() - t0)
        t0, k0 = time.perf_counter(), ticks[0]
        ctensor.eigh(a)
        elapsed, during = time.perf_counter() - t0, ticks[0] - k0
    finally:
        stop.set()
        th.join()
        sys.setswitchinterval(old)
    share = during / (rate * elapsed)
    print(f"eigh {elapsed:.3f} s, other thread at {share:.0%} of its free rate")
    assert elapsed > 0.02, f"eigh took only {elapsed:.3f} s: too short to tell"
    assert share > 0.1, f"the other thread ran {share:.1%} of its free rate during eigh"


def test_gpu_round_trip():
    if not ctensor.gpu_available():
        pytest.skip("SKIP: no usable GPU")
    a = rand((5, 7), "complex128")
    g = ctensor.Tensor(a, device="gpu")
    assert g.device == "gpu" and g.__dlpack_device__()[0] == 2
    np.testing.assert_allclose((g @ g.T.conj()).numpy(), a @ a.T.conj(), atol=1e-12)


def test_torch_exchange_when_installed():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    t = ctensor.from_dlpack(x)
    assert t.numpy().ctypes.data == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()


def test_readme_example_runs(capsys):
    """The README's Python example, as written."""
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "no Python example in the README"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    assert "shape mismatch" in capsys.readouterr().out


def test_indexing_gives_views_as_numpy():
    a = rand((5, 6, 7))
    t = ctensor.from_numpy(a)
    for key in [1, -1, (2, 3), (slice(1, 4),), (slice(None), 2), (4, slice(-3, None), 0),
                (slice(0, 0),), (slice(2, 99), slice(None, -2))]:
        got = t[key].numpy()
        assert got.shape == a[key].shape and np.array_equal(got, a[key]), key
        if got.size:
            assert np.shares_memory(got, a), key
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    assert np.asarray(t).ctypes.data == a.ctypes.data
    assert np.allclose(t, a) and np.asarray(t, dtype=np.float32).dtype == np.float32


def test_item_assignment_writes_through_views_as_numpy():
    a = rand((4, 5))
    t = ctensor.from_numpy(a)
    want = a.copy()
    t[1:3, 2] = 5.0
    want[1:3, 2] = 5.0
    t[0] = np.arange(5.0)
    want[0] = np.arange(5.0)
    t[-1, 1:] = ctensor.Tensor(np.full(4, -2.0))
    want[-1, 1:] = -2.0
    t[2, 0] = 7  # an integer into a float tensor
    want[2, 0] = 7
    assert np.array_equal(a, want), "the writes reach the shared NumPy memory"
    with pytest.raises(ctensor.Error, match="complex"):
        t[0, 0] = 1j
    with pytest.raises(ctensor.Error, match="shape"):
        t[0] = np.ones(3)
    frozen = rand((3,))
    frozen.flags.writeable = False
    with pytest.raises(ctensor.Error, match="READ_ONLY"):
        ctensor.from_numpy(frozen)[0] = 1.0
    i = ctensor.Tensor(np.zeros(3, np.int32))
    with pytest.raises(ctensor.Error):
        i[0] = 0.5  # floating into integer


def test_zero_size_with_huge_other_dimensions():
    t = ctensor.zeros((0, 2**40), "complex128")
    assert t.shape == (0, 2**40)
    u = t * 2 + 1
    assert u.shape == (0, 2**40) and u.dtype == "complex128"
    a = u.numpy()
    assert a.shape == (0, 2**40) and a.size == 0
    assert ctensor.from_numpy(np.empty((2**40, 0))).shape == (2**40, 0)
    assert ctensor.eigh(np.zeros((0, 0)), eigvals_only=True).shape == (0,)


def test_dlpack_protocol_arguments():
    a = rand((3, 4))
    t = ctensor.from_numpy(a)
    with pytest.raises(BufferError, match="use .to"):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))
    c = np.from_dlpack(t, copy=True)
    assert np.array_equal(c, a) and not np.shares_memory(c, a)

    class Legacy:  # a producer older than DLPack 1.0: no keywords, an unversioned capsule
        def __dlpack__(self):
            return t.__dlpack__()

        def __dlpack_device__(self):
            return t.__dlpack_device__()

    back = ctensor.from_dlpack(Legacy())
    assert np.shares_memory(back.numpy(), a) and np.array_equal(back.numpy(), a)
    capsule = t.__dlpack__(max_version=(1, 0))
    ctensor.from_dlpack(type("Once", (), {"__dlpack__": lambda self, **k: capsule})())
    with pytest.raises(TypeError, match="already consumed"):
        ctensor.from_dlpack(type("Twice", (), {"__dlpack__": lambda self, **k: capsule})())


def test_cuda_producers_are_asked_for_ctensors_stream():
    """A producer of CUDA memory gets ctensor's stream as `stream=` (so it orders its
    pending work before ctensor's kernels); without a GPU the import fails before the
    producer is asked for anything."""
    seen = {}
    host = np.arange(4.0)

    class FakeCuda:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            seen["stream"] = stream
            return host.__dlpack__(max_version=max_version)

    if not ctensor.gpu_available():
        with pytest.raises(ctensor.Error, match="unavailable"):
            ctensor.from_dlpack(FakeCuda())
        assert seen == {}, "no capsule was made for a stream that cannot be named"
    else:
        ctensor.from_dlpack(FakeCuda())
        assert isinstance(seen["stream"], int) and seen["stream"] not in (0, None)
    # Host memory: no stream is passed.
    seen.clear()

    class FakeHost(FakeCuda):
        def __dlpack_device__(self):
            return (1, 0)

    t = ctensor.from_dlpack(FakeHost())
    assert seen == {"stream": None} and np.array_equal(t.numpy(), host)
