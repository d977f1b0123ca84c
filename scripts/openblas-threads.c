/* OpenBLAS alone (no ctensor): ssyevr called from four threads while the same threads
 * also call dsyevr, each result checked for its full count of eigenpairs. On Debian's
 * OpenBLAS 0.3.21 with its Prescott kernels this returns m < n with info = 0 for some of
 * the ssyevr calls; why ctensor serialises such calls (kernels/src/parallel.rs,
 * blas_call). Usage: openblas-threads THREADS_BEFORE THREADS_DURING; OpenBLAS runs one
 * serial call at the first count, then the concurrent ones at the second. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void ssyevr_(const char *, const char *, const char *, const int *, float *,
                    const int *, const float *, const float *, const int *, const int *,
                    const float *, int *, float *, float *, const int *, int *, float *,
                    const int *, int *, const int *, int *);
extern void dsyevr_(const char *, const char *, const char *, const int *, double *,
                    const int *, const double *, const double *, const int *, const int *,
                    const double *, int *, double *, double *, const int *, int *, double *,
                    const int *, int *, const int *, int *);
extern void openblas_set_num_threads(int);
extern char *openblas_get_corename(void);

#define N 300
#define THREADS 4
#define ROUNDS 20

static double A[N * N]; /* a random symmetric matrix, column-major */
static int wrong = 0, calls = 0;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

/* ?syevr of `a` (N × N, type T) for all eigenpairs, after a workspace query; sets m and
 * info. One body for both precisions. */
#define SYEVR_ALL(T, syevr, a, w, z, isuppz, m, info)                                    \
  do {                                                                                  \
    int n_ = N, il_ = 1, iu_ = N, lwork_ = -1, liwork_ = -1, iq_;                       \
    T vl_ = 0, vu_ = 0, tol_ = 0, q_;                                                   \
    syevr("V", "A", "L", &n_, a, &n_, &vl_, &vu_, &il_, &iu_, &tol_, &m, w, z, &n_,     \
          isuppz, &q_, &lwork_, &iq_, &liwork_, &info);                                 \
    lwork_ = (int)q_;                                                                   \
    liwork_ = iq_;                                                                      \
    T *work_ = malloc(sizeof(T) * lwork_);                                              \
    int *iwork_ = malloc(sizeof(int) * liwork_);                                        \
    syevr("V", "A", "L", &n_, a, &n_, &vl_, &vu_, &il_, &iu_, &tol_, &m, w, z, &n_,     \
          isuppz, work_, &lwork_, iwork_, &liwork_, &info);                             \
    free(work_);                                                                        \
    free(iwork_);                                                                       \
  } while (0)

/* All eigenpairs of A in single (f = 1) or double precision; returns the eigenpair
 * count m, or -1 when info != 0. */
static int eigenpairs(int f) {
  int m = 0, info = 0;
  size_t size = f ? sizeof(float) : sizeof(double);
  void *a = malloc(size * N * N), *w = malloc(size * N), *z = malloc(size * N * N);
  int *isuppz = malloc(sizeof(int) * 2 * N);
  for (int i = 0; i < N * N; i++) {
    if (f) ((float *)a)[i] = (float)A[i];
    else ((double *)a)[i] = A[i];
  }
  if (f) SYEVR_ALL(float, ssyevr_, (float *)a, (float *)w, (float *)z, isuppz, m, info);
  else SYEVR_ALL(double, dsyevr_, (double *)a, (double *)w, (double *)z, isuppz, m, info);
  free(a);
  free(w);
  free(z);
  free(isuppz);
  return info == 0 ? m : -1;
}

static void *worker(void *unused) {
  for (int r = 0; r < ROUNDS; r++) {
    int bad_double = eigenpairs(0) != N;
    int bad_single = eigenpairs(1) != N;
    pthread_mutex_lock(&count_lock);
    calls += 2;
    wrong += bad_double + bad_single;
    pthread_mutex_unlock(&count_lock);
  }
  return unused;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS_BEFORE THREADS_DURING\n", argv[0]);
    return 2;
  }
  int before = atoi(argv[1]), during = atoi(argv[2]);
  srand(31);
  for (int j = 0; j < N; j++)
    for (int i = j; i < N; i++) A[i + j * N] = A[j + i * N] = 2.0 * rand() / RAND_MAX - 1.0;
  openblas_set_num_threads(before);
  int serial = eigenpairs(1) == N && eigenpairs(0) == N;
  openblas_set_num_threads(during);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  printf("%s kernels, OpenBLAS threads %d then %d: serial calls %s; %d of %d concurrent "
         "calls wrong\n",
         openblas_get_corename(), before, during, serial ? "right" : "WRONG", wrong, calls);
  return wrong != 0 || !serial;
}
