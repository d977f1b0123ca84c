/* A C client of ctensor's ABI: create, map a C array, matmul, eigh of a Hermitian
 * matrix, einsum with conj_y and beta into a map over the caller's memory, the raw
 * zgemm/zheevd kernels on plain arrays, and error handling. Exits non-zero on any
 * mismatch. Built and run by `make test` (tests/c/run.sh). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctensor.h"

#include "check.h"

int main(void) {
  printf("ctensor %s\n", ct_version());

  /* A 2x3 row-major double matrix from host data, times a 3x2 Fortran-order map. */
  double a_host[6] = {1, 2, 3, 4, 5, 6};
  size_t a_shape[2] = {2, 3};
  ct_tensor *a = NULL;
  OK(ct_tensor_from_host(CT_F64, 2, a_shape, CT_ROW_MAJOR, a_host, &a));
  double b_fortran[6] = {1, 0, 1, 0, 1, 1}; /* B(3,2) column-major: [[1,0],[0,1],[1,1]] */
  size_t b_shape[2] = {3, 2};
  ct_tensor *b = NULL;
  OK(ct_tensor_map(b_fortran, CT_F64, CT_CPU, 2, b_shape, CT_COL_MAJOR, &b));
  ct_tensor *c = NULL;
  OK(ct_matmul(a, b, &c));
  size_t c_shape[2] = {0, 0};
  OK(ct_tensor_shape(c, c_shape));
  CHECK(c_shape[0] == 2 && c_shape[1] == 2, "matmul shape %zu x %zu", c_shape[0], c_shape[1]);
  double *cp = NULL;
  OK(ct_tensor_data(c, (void **)&cp));
  double want_c[4] = {4, 5, 10, 11};
  for (int i = 0; i < 4; i++) CHECK(fabs(cp[i] - want_c[i]) < 1e-12, "C[%d] = %g, want %g", i, cp[i], want_c[i]);

  /* eigh of the Hermitian [[2, 1-i], [1+i, 3]]: eigenvalues 1 and 4. */
  double complex h[4] = {2, 1 - I, 1 + I, 3};
  size_t h_shape[2] = {2, 2};
  ct_tensor *ht = NULL, *w = NULL, *v = NULL;
  OK(ct_tensor_from_host(CT_C64, 2, h_shape, CT_ROW_MAJOR, h, &ht));
  OK(ct_eigh(ht, NULL, 0, &w, &v));
  int32_t wdt = -1;
  OK(ct_tensor_dtype(w, &wdt));
  CHECK(wdt == CT_F64, "eigenvalues dtype %d", wdt);
  double *wp = NULL;
  OK(ct_tensor_data(w, (void **)&wp));
  CHECK(fabs(wp[0] - 1.0) < 1e-12 && fabs(wp[1] - 4.0) < 1e-12, "eigenvalues %g %g", wp[0], wp[1]);
  /* H v = λ v for the first column of V (row-major, like the input). */
  double complex *vp = NULL;
  OK(ct_tensor_data(v, (void **)&vp));
  for (int i = 0; i < 2; i++) {
    double complex hv = h[i * 2 + 0] * vp[0] + h[i * 2 + 1] * vp[2];
    CHECK(cabs(hv - wp[0] * vp[i * 2]) < 1e-12, "H v != λ v at row %d", i);
  }

  /* The mixed-precision backend (4): eigenvalues only (v_out NULL), the same 1 and 4;
     asking it for eigenvectors is an error, not a crash. */
  ct_tensor *wm = NULL, *vm = NULL;
  OK(ct_eigh(ht, NULL, 4, &wm, NULL));
  double *wmp = NULL;
  OK(ct_tensor_data(wm, (void **)&wmp));
  CHECK(fabs(wmp[0] - 1.0) < 1e-12 && fabs(wmp[1] - 4.0) < 1e-12, "mixed eigenvalues %g %g", wmp[0], wmp[1]);
  OK(ct_tensor_free(wm));
  ct_tensor *wm2 = NULL;
  CHECK(ct_eigh(ht, NULL, 4, &wm2, &vm) != CT_OK && wm2 == NULL && vm == NULL,
        "mixed backend with eigenvectors accepted");

  /* S = alpha ψψᴴ + beta S into a Fortran-order map over the caller's 2x2 array. */
  double complex psi[4] = {1 + I, 2, 0, 1 - I};
  size_t psi_shape[2] = {2, 2};
  ct_tensor *pt = NULL;
  OK(ct_tensor_from_host(CT_C64, 2, psi_shape, CT_ROW_MAJOR, psi, &pt));
  double complex s_mem[4] = {1, 1, 1, 1}; /* column-major, old contents */
  ct_tensor *s = NULL;
  OK(ct_tensor_map(s_mem, CT_C64, CT_CPU, 2, psi_shape, CT_COL_MAJOR, &s));
  ct_einsum_options opts = ct_einsum_default_options();
  opts.conj_y = 1;
  opts.alpha_re = 2.0;
  opts.beta_re = -1.0;
  ct_tensor *ops[2] = {pt, pt}; /* the natural idiom: handles as returned */
  OK(ct_einsum_into("ij,kj->ik", 2, ops, &opts, s));
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++) {
      double complex sum = 0;
      for (int j = 0; j < 2; j++) sum += psi[i * 2 + j] * conj(psi[k * 2 + j]);
      double complex want = 2.0 * sum - 1.0;
      CHECK(cabs(s_mem[i + k * 2] - want) < 1e-12, "S(%d,%d) = %g%+gi, want %g%+gi", i, k,
            creal(s_mem[i + k * 2]), cimag(s_mem[i + k * 2]), creal(want), cimag(want));
    }

  /* The raw kernels on plain arrays: zgemm and zheevd. */
  ct_c64 one = {1, 0}, zero = {0, 0};
  double complex zc[4];
  OK(ct_zgemm('N', 'C', 2, 2, 2, &one, (const ct_c64 *)h, 2, (const ct_c64 *)h, 2, &zero, (ct_c64 *)zc, 2));
  double complex hcopy[4];
  memcpy(hcopy, h, sizeof h);
  double wk[2];
  OK(ct_zheevd('V', 'L', 2, (ct_c64 *)hcopy, 2, wk));
  CHECK(fabs(wk[0] - 1.0) < 1e-12 && fabs(wk[1] - 4.0) < 1e-12, "zheevd %g %g", wk[0], wk[1]);
  double one_d = 1.0, zero_d = 0.0, x[2] = {1, 2}, y[1];
  OK(ct_gemm(CT_F64, CT_CPU, 'T', 'N', 1, 1, 2, &one_d, x, 2, x, 2, &zero_d, y, 1));
  CHECK(fabs(y[0] - 5.0) < 1e-12, "ct_gemm dot %g", y[0]);

  /* Errors: a status and a message, never a crash. */
  ct_tensor *bad = NULL;
  ct_status st = ct_matmul(a, a, &bad); /* 2x3 times 2x3 */
  CHECK(st == CT_ERR_SHAPE, "shape error status %d", (int)st);
  CHECK(strstr(ct_last_error_message(), "ct_matmul") != NULL, "message: %s", ct_last_error_message());
  st = ct_tensor_zeros(42, CT_CPU, 2, a_shape, &bad);
  CHECK(st == CT_ERR_INVALID_ARGUMENT, "bad dtype status %d", (int)st);
  st = ct_tensor_zeros(CT_F64, CT_CPU, 2, NULL, &bad);
  CHECK(st == CT_ERR_NULL, "null shape status %d", (int)st);
  int gpu = -1;
  OK(ct_device_available(CT_GPU, &gpu));
  OK(ct_device_synchronize(CT_CPU));
  st = ct_device_synchronize(CT_GPU);
  CHECK(st == (gpu ? CT_OK : CT_ERR_DEVICE), "gpu synchronize status %d", (int)st);
  st = ct_tensor_zeros(CT_F64, CT_GPU, 2, a_shape, &bad);
  if (gpu) {
    CHECK(st == CT_OK, "gpu tensor status %d: %s", (int)st, ct_last_error_message());
    OK(ct_tensor_free(bad));
    bad = NULL;
  } else {
    CHECK(st == CT_ERR_DEVICE, "gpu status %d: %s", (int)st, ct_last_error_message());
  }
  st = ct_zgemm('X', 'N', 2, 2, 2, &one, (const ct_c64 *)h, 2, (const ct_c64 *)h, 2, &zero, (ct_c64 *)zc, 2);
  CHECK(st == CT_ERR_INVALID_ARGUMENT, "bad trans status %d", (int)st);
  double complex neg[4] = {-1, 0, 0, 1};
  ct_tensor *nt = NULL, *chol = NULL;
  OK(ct_tensor_from_host(CT_C64, 2, h_shape, CT_ROW_MAJOR, neg, &nt));
  st = ct_cholesky(nt, 'L', &chol);
  CHECK(st == CT_ERR_LAPACK, "cholesky of an indefinite matrix: %d", (int)st);
  CHECK(strstr(ct_last_error_message(), "not positive definite") != NULL, "message: %s", ct_last_error_message());

  /* A mirrored tensor: no values before write_only, versions, views of the copies. */
  ct_mirrored *mt = NULL;
  ct_tensor *view = NULL;
  OK(ct_mirrored_new(CT_F64, 2, a_shape, &mt));
  st = ct_mirrored_read(mt, CT_CPU, &view);
  CHECK(st == CT_ERR_INVALID_ARGUMENT && strstr(ct_last_error_message(), "write_only") != NULL,
        "read before write: %d %s", (int)st, ct_last_error_message());
  OK(ct_mirrored_write_only(mt, CT_CPU, &view));
  OK(ct_tensor_set_value(view, 2.5, 0.0));
  OK(ct_tensor_free(view));
  uint64_t version = 0;
  int32_t current = 0;
  OK(ct_mirrored_version(mt, CT_CPU, &version, &current));
  CHECK(version == 1 && current == 1, "version %llu current %d", (unsigned long long)version, current);
  OK(ct_mirrored_version(mt, CT_GPU, &version, &current));
  CHECK(current == 0, "no GPU copy is current");
  OK(ct_mirrored_read(mt, CT_CPU, &view));
  double *mv = NULL;
  OK(ct_tensor_data(view, (void **)&mv));
  CHECK(mv[0] == 2.5 && mv[5] == 2.5, "mirrored values %g %g", mv[0], mv[5]);
  OK(ct_tensor_free(view));
  OK(ct_mirrored_write(mt, CT_CPU, &view));
  OK(ct_tensor_free(view));
  OK(ct_mirrored_version(mt, CT_CPU, &version, &current));
  CHECK(version == 2, "a write makes version 2, got %llu", (unsigned long long)version);
  OK(ct_mirrored_free(mt));
  st = ct_mirrored_free(mt);
  CHECK(st == CT_ERR_INVALID_HANDLE, "double free of a mirrored tensor: %d", (int)st);
  ct_memory_stats ms;
  st = ct_gpu_memory_stats(&ms);
  CHECK(st == (gpu ? CT_OK : CT_ERR_DEVICE), "gpu memory stats status %d", (int)st);

  /* Pinned memory, streams and asynchronous copies: a round trip through the GPU on a
   * stream of its own with a GPU, the device error without one. */
  int32_t pinned = -1;
  OK(ct_tensor_is_pinned(a, &pinned));
  CHECK(pinned == 0, "an ordinary tensor is not pinned: %d", (int)pinned);
  OK(ct_tensor_synchronize(a)); /* nothing in flight: returns at once */
  st = ct_pinned_memory_stats(&ms);
  CHECK(st == (gpu ? CT_OK : CT_ERR_DEVICE), "pinned memory stats status %d", (int)st);
  CHECK(ct_stream_free(NULL) == CT_ERR_NULL, "freeing a null stream");
  CHECK(ct_stream_synchronize(NULL) == CT_ERR_NULL, "synchronizing a null stream");
  CHECK(ct_mirrored_prefetch(NULL, CT_GPU, NULL) == CT_ERR_NULL, "prefetching a null mirror");
  CHECK(ct_tensor_is_pinned(a, NULL) == CT_ERR_NULL, "a null out-pointer");
  {
    size_t bad_shape[1] = {4};
    ct_tensor *none = NULL;
    st = ct_tensor_pinned(99, 1, bad_shape, CT_ROW_MAJOR, &none);
    CHECK(st == CT_ERR_INVALID_ARGUMENT && none == NULL, "pinned with dtype 99: %d", (int)st);
    st = ct_tensor_pinned(CT_F64, 1, bad_shape, 7, &none);
    CHECK(st == CT_ERR_INVALID_ARGUMENT && none == NULL, "pinned with order 7: %d", (int)st);
  }
  ct_stream *stream = NULL;
  ct_tensor *pin = NULL;
  size_t pin_shape[1] = {1000};
  st = ct_stream_new(&stream);
  CHECK(st == (gpu ? CT_OK : CT_ERR_DEVICE), "stream status %d", (int)st);
  st = ct_tensor_pinned(CT_F64, 1, pin_shape, CT_ROW_MAJOR, &pin);
  CHECK(st == (gpu ? CT_OK : CT_ERR_DEVICE), "pinned tensor status %d", (int)st);
  if (gpu) {
    OK(ct_tensor_is_pinned(pin, &pinned));
    CHECK(pinned == 1, "a pinned tensor says so: %d", (int)pinned);
    double *pp = NULL;
    OK(ct_tensor_data(pin, (void **)&pp));
    for (int i = 0; i < 1000; i++) pp[i] = 0.5 * i;
    ct_tensor *dev = NULL, *back = NULL;
    OK(ct_tensor_to_device_async(pin, CT_GPU, stream, &dev));
    OK(ct_tensor_to_device_async(dev, CT_CPU, stream, &back));
    OK(ct_stream_synchronize(stream));
    double *bp = NULL;
    OK(ct_tensor_data(back, (void **)&bp));
    CHECK(bp[0] == 0.0 && bp[999] == 499.5, "async round trip %g %g", bp[0], bp[999]);
    OK(ct_tensor_sync_async(back, pin, stream)); /* host to host: a plain copy */
    st = ct_tensor_sync_async(back, a, stream);
    CHECK(st == CT_ERR_SHAPE, "async copy of another shape: %d", (int)st);
    OK(ct_tensor_free(dev));
    OK(ct_tensor_free(back));
    OK(ct_tensor_free(pin));
    OK(ct_stream_free(stream));
    st = ct_stream_free(stream);
    CHECK(st == CT_ERR_INVALID_HANDLE, "double free of a stream: %d", (int)st);
  } else {
    CHECK(stream == NULL && pin == NULL, "nothing is handed out on failure");
    ct_tensor *dev = NULL;
    st = ct_tensor_to_device_async(a, CT_GPU, stream, &dev);
    CHECK(st == CT_ERR_NULL, "an async copy on a null stream: %d", (int)st);
    ct_mirrored *mp = NULL;
    size_t mshape[1] = {4};
    OK(ct_mirrored_new(CT_F64, 1, mshape, &mp));
    st = ct_mirrored_prefetch(mp, CT_GPU, stream);
    CHECK(st == CT_ERR_NULL, "a prefetch on a null stream: %d", (int)st);
    OK(ct_mirrored_free(mp));
  }

  ct_tensor *all[] = {a, b, c, ht, w, v, pt, s, nt};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) OK(ct_tensor_free(all[i]));
  st = ct_tensor_free(a); /* double free is detected */
  CHECK(st == CT_ERR_INVALID_HANDLE, "double free status %d", (int)st);

  if (failures) {
    fprintf(stderr, "client.c: %d failure(s)\n", failures);
    return 1;
  }
  printf("client.c: all checks passed\n");
  return 0;
}
