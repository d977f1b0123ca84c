"""DLPack exchange with a foreign array library, both ways: JAX (jax[cpu], installed by
scripts/py-env.sh), and PyTorch and CuPy when installed (skipped with the reason
otherwise)."""

import numpy as np
import pytest

import ctensor

DTYPES = ["float32", "float64", "complex64", "complex128", "int32", "int64", "float16"]


def sample(dtype, shape=(3, 5)):
    a = np.arange(np.prod(shape)).reshape(shape) * 1.25 - 4
    if np.dtype(dtype).kind == "c":
        a = a + 0.5j * a[::-1]
    return a.astype(dtype)


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'jax[cpu]')")
    jax.config.update("jax_enable_x64", True)  # float64 stays float64
    return jax


@pytest.mark.parametrize("dtype", DTYPES)
def test_ctensor_to_jax_every_dtype(jax, dtype):
    import jax.numpy as jnp

    a = sample(dtype)
    t = ctensor.from_numpy(a)
    for view, want in [(t, a), (t.T, a.T), (t[1:], a[1:]), (t[1:, ::2].copy(), a[1:, ::2])]:
        x = jnp.from_dlpack(view)
        assert x.dtype == want.dtype and x.shape == want.shape
        assert np.array_equal(np.asarray(x), want)
    # JAX takes compact layouts only (any order of the axes): a strided view is its
    # refusal, not a wrong array.
    with pytest.raises(Exception, match="compact"):
        jnp.from_dlpack(t[1:, ::2])
    # JAX computes on it: its eigenvalues of an exported Hermitian matrix are ours.
    if np.dtype(dtype).kind in "fc" and dtype != "float16":
        h = a[:, :3].T.conj() @ a[:, :3] + np.eye(3)
        th = ctensor.from_numpy(np.ascontiguousarray(h))
        tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
        np.testing.assert_allclose(
            np.asarray(jnp.linalg.eigvalsh(jnp.from_dlpack(th))),
            ctensor.eigh(th, eigvals_only=True).numpy(),
            rtol=tol,
            atol=tol,
        )


@pytest.mark.parametrize("dtype", DTYPES)
def test_jax_to_ctensor_shares_memory_and_refuses_writes(jax, dtype):
    import jax.numpy as jnp

    x = jnp.asarray(sample(dtype)) * 2
    t = ctensor.from_dlpack(x)
    assert t.dtype == x.dtype and t.shape == x.shape
    assert np.array_equal(t.numpy(), np.asarray(x))
    assert t.numpy().ctypes.data == x.unsafe_buffer_pointer()  # no copy
    # JAX arrays are immutable: a write would change one behind JAX's back.
    with pytest.raises(ctensor.Error, match="READ_ONLY|read-only"):
        t[0, 0] = 1
    with pytest.raises(ctensor.Error, match="READ_ONLY|read-only"):
        t += 1
    assert not t.numpy().flags.writeable
    assert np.array_equal(np.asarray(x), sample(dtype) * 2)
    # ctensor's ops read it; a copy is writable.
    same = (t + 0).numpy()
    assert np.array_equal(same, np.asarray(x))
    c = ctensor.Tensor(x)
    c[0, 0] = 1
    assert c.numpy()[0, 0] == 1 and np.asarray(x)[0, 0] == sample(dtype)[0, 0] * 2


def test_bfloat16_both_ways(jax):
    import jax.numpy as jnp

    x = jnp.arange(6.0, dtype=jnp.bfloat16).reshape(2, 3)
    t = ctensor.from_dlpack(x)
    assert str(t.dtype) == "bfloat16"
    assert np.array_equal(t.astype("float32").numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3))
    back = jnp.from_dlpack(t.astype("float32").astype("bfloat16"))
    assert back.dtype == jnp.bfloat16
    assert np.array_equal(np.asarray(back, dtype=np.float32), np.arange(6.0).reshape(2, 3))


def test_round_trip_through_jax(jax):
    import jax.numpy as jnp

    a = sample("complex128", (4, 4))
    t = ctensor.from_numpy(a)
    x = jnp.from_dlpack(t) @ jnp.from_dlpack(t)
    u = ctensor.from_dlpack(x)
    np.testing.assert_allclose(u.numpy(), a @ a, rtol=1e-12)
    np.testing.assert_allclose((u - t @ t).numpy(), 0, atol=1e-10)


def test_pytorch_both_ways():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    t = ctensor.from_dlpack(x)
    assert t.numpy().ctypes.data == x.data_ptr()
    t[0, 0] = 7.0  # PyTorch tensors are mutable: the write shows in x
    assert x[0, 0].item() == 7.0
    y = torch.from_dlpack(t.T)
    assert torch.equal(y, x.T)


def test_cupy_both_ways():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    if not ctensor.gpu_available():
        pytest.skip("no GPU for ctensor")
    x = cupy.arange(12, dtype=cupy.float64).reshape(3, 4)
    t = ctensor.from_dlpack(x)
    assert t.device == "gpu"
    y = cupy.from_dlpack(t)
    assert bool((y == x).all())
