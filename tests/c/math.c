/* The element-wise functions and comparisons of the C ABI against libm, element by
 * element, on 301 doubles with NaN, infinities and signed zeros; integer fmod and
 * comparisons; a broadcast; a bad handle. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ctensor.h"

#define N 301

typedef ct_status (*unary_fn)(const ct_tensor *, ct_tensor **);
typedef ct_status (*binary_fn)(const ct_tensor *, const ct_tensor *, ct_tensor **);

static int same(double got, double want) {
  return (isnan(got) && isnan(want)) || memcmp(&got, &want, sizeof got) == 0;
}

/* +0 for either zero (NumPy's and the array API's), NaN kept. */
static double sign_of(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }
static double neg_of(double x) { return -x; }
static double square_of(double x) { return x * x; }
static double reciprocal_of(double x) { return 1.0 / x; }
static double rsqrt_of(double x) { return 1.0 / sqrt(x); }
/* NumPy's logaddexp: the larger plus log1p(exp(smaller - larger)). */
static double logaddexp_of(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return a + 0.69314718055994530942; /* ln 2 */
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

int main(void) {
  double a[N], b[N];
  const double special[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 1.0, -1.0};
  srand(5);
  for (int i = 0; i < N; i++) {
    a[i] = (rand() / (double)RAND_MAX - 0.5) * 8.0;
    b[i] = (rand() / (double)RAND_MAX - 0.5) * 8.0;
    if (i % 7 == 3) a[i] = special[(i / 7) % 7];
    if (i % 5 == 2) b[i] = special[(i / 5) % 7];
  }
  const size_t shape[1] = {N};
  ct_tensor *ta = NULL, *tb = NULL;
  OK(ct_tensor_from_host(CT_F64, 1, shape, CT_ROW_MAJOR, a, &ta));
  OK(ct_tensor_from_host(CT_F64, 1, shape, CT_ROW_MAJOR, b, &tb));

  struct { const char *name; unary_fn f; double (*ref)(double); } unary[] = {
      {"sin", ct_sin, sin},       {"cos", ct_cos, cos},
      {"tan", ct_tan, tan},       {"log", ct_log, log},
      {"log1p", ct_log1p, log1p}, {"expm1", ct_expm1, expm1},
      {"square", ct_square, square_of}, {"reciprocal", ct_reciprocal, reciprocal_of},
      {"rsqrt", ct_rsqrt, rsqrt_of}, {"sign", ct_sign, sign_of},
      {"floor", ct_floor, floor}, {"ceil", ct_ceil, ceil},
      {"round", ct_round, nearbyint}, {"neg", ct_neg, neg_of},
      {"sqrt", ct_sqrt, sqrt},    {"exp", ct_exp, exp},
      {"abs", ct_abs, fabs},
  };
  for (size_t k = 0; k < sizeof unary / sizeof unary[0]; k++) {
    ct_tensor *r = NULL;
    OK(unary[k].f(ta, &r));
    if (!r) continue;
    double *p = NULL;
    OK(ct_tensor_data(r, (void **)&p));
    for (int i = 0; i < N && p; i++)
      CHECK(same(p[i], unary[k].ref(a[i])), "%s(%g) = %.17g, libm %.17g", unary[k].name, a[i],
            p[i], unary[k].ref(a[i]));
    OK(ct_tensor_free(r));
  }

  struct { const char *name; binary_fn f; double (*ref)(double, double); } binary[] = {
      {"pow", ct_pow, pow},     {"atan2", ct_atan2, atan2},       {"hypot", ct_hypot, hypot},
      {"copysign", ct_copysign, copysign}, {"fmod", ct_fmod, fmod},
      {"logaddexp", ct_logaddexp, logaddexp_of},
  };
  for (size_t k = 0; k < sizeof binary / sizeof binary[0]; k++) {
    ct_tensor *r = NULL;
    OK(binary[k].f(ta, tb, &r));
    if (!r) continue;
    double *p = NULL;
    OK(ct_tensor_data(r, (void **)&p));
    for (int i = 0; i < N && p; i++)
      CHECK(same(p[i], binary[k].ref(a[i], b[i])), "%s(%g, %g) = %.17g, libm %.17g",
            binary[k].name, a[i], b[i], p[i], binary[k].ref(a[i], b[i]));
    OK(ct_tensor_free(r));
  }

  /* Comparisons give int32 masks (IEEE: NaN compares false but in not_equal). */
  binary_fn cmp[] = {ct_lt, ct_le, ct_gt, ct_ge, ct_equal, ct_not_equal};
  for (int k = 0; k < 6; k++) {
    ct_tensor *r = NULL;
    OK(cmp[k](ta, tb, &r));
    if (!r) continue;
    int32_t dt = -1;
    OK(ct_tensor_dtype(r, &dt));
    CHECK(dt == CT_I32, "comparison %d gives dtype %d", k, (int)dt);
    int32_t *m = NULL;
    OK(ct_tensor_data(r, (void **)&m));
    for (int i = 0; i < N && m; i++) {
      int want = k == 0 ? a[i] < b[i] : k == 1 ? a[i] <= b[i] : k == 2 ? a[i] > b[i]
               : k == 3 ? a[i] >= b[i] : k == 4 ? a[i] == b[i] : a[i] != b[i];
      CHECK(m[i] == want, "comparison %d of (%g, %g): %d, want %d", k, a[i], b[i], m[i], want);
    }
    OK(ct_tensor_free(r));
  }

  /* Integer fmod stays int32 and C's remainder; a zero divisor gives 0. */
  int32_t ia[4] = {7, -7, 7, INT32_MIN}, ib[4] = {3, 3, 0, -1};
  const size_t four[1] = {4};
  ct_tensor *ti = NULL, *tj = NULL, *tr = NULL;
  OK(ct_tensor_from_host(CT_I32, 1, four, CT_ROW_MAJOR, ia, &ti));
  OK(ct_tensor_from_host(CT_I32, 1, four, CT_ROW_MAJOR, ib, &tj));
  OK(ct_fmod(ti, tj, &tr));
  int32_t *ir = NULL;
  if (tr) OK(ct_tensor_data(tr, (void **)&ir));
  CHECK(ir && ir[0] == 1 && ir[1] == -1 && ir[2] == 0 && ir[3] == 0, "integer fmod");

  /* A shape that does not broadcast, and a null handle, are errors with a message. */
  ct_tensor *bad = NULL;
  CHECK(ct_hypot(ta, ti, &bad) != CT_OK && bad == NULL, "[301] with [4] must not broadcast");
  CHECK(strlen(ct_last_error_message()) > 0, "an error has a message");
  CHECK(ct_sin(NULL, &bad) == CT_ERR_NULL, "a null handle is refused");
  CHECK(ct_sin((const ct_tensor *)&bad, &bad) == CT_ERR_INVALID_HANDLE, "a pointer that is no handle is refused");

  OK(ct_tensor_free(tr));
  OK(ct_tensor_free(tj));
  OK(ct_tensor_free(ti));
  OK(ct_tensor_free(tb));
  OK(ct_tensor_free(ta));
  if (failures) {
    fprintf(stderr, "math.c: %d failure(s)\n", failures);
    return 1;
  }
  printf("math.c: every function and comparison matches libm\n");
  return 0;
}
