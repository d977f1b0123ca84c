/* A C client of ctensor's interop ABI: DLPack in both directions (a producer made here,
 * whose deleter must run exactly once; ctensor's exports read field by field and used
 * after the exporting handle is freed) and .npy files. Run by tests/c/run.sh, also under
 * valgrind, which catches a deleter that runs twice, never, or too early.
 * Usage: dlpack DIR (a directory for the .npy file). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctensor.h"

/* The layout of dlpack.h 1.1 on LP64, from its field list. */
_Static_assert(sizeof(DLDevice) == 8, "DLDevice");
_Static_assert(sizeof(DLDataType) == 4, "DLDataType");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(offsetof(DLManagedTensorVersioned, flags) == 24, "flags");
_Static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor");
_Static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor.deleter");

#include "check.h"

static int deleted = 0;

static void producer_deleter(DLManagedTensorVersioned *self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self->dl_tensor.strides);
  free(self);
  deleted++;
}

/* A 3 x 2 column-major double matrix [[1, 4], [2, 5], [3, 6]] owned by the producer. */
static DLManagedTensorVersioned *produce(uint64_t flags, uint32_t major) {
  DLManagedTensorVersioned *m = calloc(1, sizeof *m);
  double *data = malloc(6 * sizeof *data);
  int64_t *shape = malloc(2 * sizeof *shape), *strides = malloc(2 * sizeof *strides);
  for (int i = 0; i < 6; i++) data[i] = i + 1;
  shape[0] = 3, shape[1] = 2, strides[0] = 1, strides[1] = 3;
  m->version.major = major;
  m->version.minor = 1;
  m->deleter = producer_deleter;
  m->flags = flags;
  m->dl_tensor = (DLTensor){data, {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, shape, strides, 0};
  return m;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: dlpack DIR\n");
    return 2;
  }

  /* Import: zero copy, the producer's strides, the deleter once when the last handle goes. */
  DLManagedTensorVersioned *m = produce(0, 1);
  void *producer_data = m->dl_tensor.data;
  ct_tensor *t = NULL, *col = NULL;
  OK(ct_tensor_from_dlpack(m, &t));
  size_t strides[2] = {0, 0};
  OK(ct_tensor_strides(t, strides));
  CHECK(strides[0] == 1 && strides[1] == 3, "strides %zu %zu", strides[0], strides[1]);
  void *p = NULL;
  OK(ct_tensor_data(t, &p));
  CHECK(p == producer_data, "the import is not zero-copy");
  OK(ct_tensor_index(t, 1, &col)); /* row 1: [2, 5] */
  OK(ct_tensor_free(t));
  CHECK(deleted == 0, "deleter ran while a view lives (%d)", deleted);
  double row[2] = {0, 0};
  void *rp = NULL;
  OK(ct_tensor_data(col, &rp));
  memcpy(&row[0], rp, sizeof(double));
  memcpy(&row[1], (double *)rp + 3, sizeof(double));
  CHECK(row[0] == 2 && row[1] == 5, "row 1 = [%g, %g]", row[0], row[1]);
  OK(ct_tensor_free(col));
  CHECK(deleted == 1, "deleter calls after the last handle: %d", deleted);

  /* The read-only flag: writes are refused, with the reason. */
  OK(ct_tensor_from_dlpack(produce(DLPACK_FLAG_BITMASK_READ_ONLY, 1), &t));
  ct_status st = ct_tensor_set_value(t, 1.0, 0.0);
  CHECK(st == CT_ERR_BORROW, "write to read-only memory: %d", (int)st);
  CHECK(strstr(ct_last_error_message(), "READ_ONLY") != NULL, "message: %s", ct_last_error_message());
  OK(ct_tensor_free(t));
  CHECK(deleted == 2, "deleter calls: %d", deleted);

  /* A major version we cannot read: an error, and the deleter still runs. */
  t = NULL;
  st = ct_tensor_from_dlpack(produce(0, 2), &t);
  CHECK(st == CT_ERR_INVALID_ARGUMENT && t == NULL, "version 2: %d", (int)st);
  CHECK(deleted == 3, "deleter calls after a refused import: %d", deleted);
  st = ct_tensor_from_dlpack(NULL, &t);
  CHECK(st == CT_ERR_NULL, "null: %d", (int)st);

  /* Export: a view with an offset, described field by field, alive after its handles. */
  double host[6] = {1, 2, 3, 4, 5, 6};
  size_t shape[2] = {2, 3};
  ct_tensor *a = NULL, *a1 = NULL;
  OK(ct_tensor_from_host(CT_F64, 2, shape, CT_ROW_MAJOR, host, &a));
  OK(ct_tensor_index(a, 1, &a1)); /* [4, 5, 6] */
  DLManagedTensorVersioned *e = NULL;
  OK(ct_tensor_to_dlpack(a1, &e));
  OK(ct_tensor_free(a1));
  OK(ct_tensor_free(a));
  CHECK(e->version.major == DLPACK_MAJOR_VERSION && e->version.minor == 1, "version");
  CHECK(e->flags == 0, "flags %llu", (unsigned long long)e->flags);
  CHECK(e->dl_tensor.device.device_type == kDLCPU, "device");
  CHECK(e->dl_tensor.dtype.code == kDLFloat && e->dl_tensor.dtype.bits == 64 && e->dl_tensor.dtype.lanes == 1, "dtype");
  CHECK(e->dl_tensor.ndim == 1 && e->dl_tensor.shape[0] == 3 && e->dl_tensor.strides[0] == 1, "shape/strides");
  CHECK(e->dl_tensor.byte_offset == 3 * sizeof(double), "byte offset %llu", (unsigned long long)e->dl_tensor.byte_offset);
  const double *ev = (const double *)((const char *)e->dl_tensor.data + e->dl_tensor.byte_offset);
  CHECK(ev[0] == 4 && ev[1] == 5 && ev[2] == 6, "exported values %g %g %g", ev[0], ev[1], ev[2]);
  e->deleter(e); /* the last owner: frees the memory (valgrind checks) */

  /* No place for the export: refused, and nothing leaks (valgrind checks). */
  OK(ct_tensor_from_host(CT_F64, 2, shape, CT_ROW_MAJOR, host, &a));
  st = ct_tensor_to_dlpack(a, NULL);
  CHECK(st == CT_ERR_NULL, "export to a null out: %d", (int)st);
  OK(ct_tensor_free(a));

  /* Export, then import again: one buffer, no copy. */
  OK(ct_tensor_from_host(CT_F64, 2, shape, CT_ROW_MAJOR, host, &a));
  OK(ct_tensor_to_dlpack(a, &e));
  OK(ct_tensor_from_dlpack(e, &t));
  void *pa = NULL, *pt = NULL;
  OK(ct_tensor_data(a, &pa));
  OK(ct_tensor_data(t, &pt));
  CHECK(pa == pt, "round trip copied");
  OK(ct_tensor_free(a));
  OK(ct_tensor_free(t));

  /* .npy: save, load back, and a clear error for a missing file. */
  char path[4096];
  snprintf(path, sizeof path, "%s/c-client.npy", argv[1]);
  double z[6] = {1.5, -2, 3, 4, 5e300, -0.0};
  OK(ct_tensor_from_host(CT_F64, 2, shape, CT_COL_MAJOR, z, &a));
  OK(ct_tensor_save_npy(a, path));
  OK(ct_tensor_load_npy(path, CT_CPU, &t));
  size_t s2[2] = {0, 0};
  OK(ct_tensor_strides(t, s2));
  CHECK(s2[0] == 1 && s2[1] == 2, "a Fortran-order file loads column-major: %zu %zu", s2[0], s2[1]);
  void *zt = NULL;
  OK(ct_tensor_data(t, &zt));
  CHECK(memcmp(zt, z, sizeof z) == 0, "npy round trip changed the bytes");
  OK(ct_tensor_free(a));
  OK(ct_tensor_free(t));
  st = ct_tensor_load_npy(NULL, CT_CPU, &t);
  CHECK(st == CT_ERR_NULL, "null path: %d", (int)st);
  st = ct_tensor_load_npy("\xff\xfe.npy", CT_CPU, &t);
  CHECK(st == CT_ERR_INVALID_ARGUMENT && strstr(ct_last_error_message(), "UTF-8") != NULL,
        "non-UTF-8 path: %d %s", (int)st, ct_last_error_message());
  st = ct_tensor_load_npy("/nonexistent/ctensor.npy", CT_CPU, &t);
  CHECK(st == CT_ERR_IO, "missing file: %d", (int)st);
  CHECK(strstr(ct_last_error_message(), "/nonexistent/ctensor.npy") != NULL, "message: %s", ct_last_error_message());

  if (failures) {
    fprintf(stderr, "dlpack.c: %d failure(s)\n", failures);
    return 1;
  }
  printf("dlpack.c: all checks passed (producer deleter ran %d times, once per tensor)\n", deleted);
  return 0;
}
