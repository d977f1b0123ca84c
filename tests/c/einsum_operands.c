/* The einsum operand array in every shape a C caller writes it: `const ct_tensor *ops[]`
 * (the prototype's own `const ct_tensor *const *`, what clients of the earlier header
 * pass), and in C11 also `ct_tensor *ops[]` and `ct_tensor *const ops[]` (handles as the
 * other functions return them). tests/c/run.sh compiles it with -Werror -pedantic as
 * C99 (the const form only: C99 has no _Generic) and as C11, so a header change that
 * breaks either shape fails the build. */
#include <math.h>
#include <stdio.h>

#include "ctensor.h"

#include "check.h"

/* x = [1, 2, 3]: einsum("i,i->", x, x) is 14. */
static void check_dot(const char *what, ct_status st, ct_tensor **result) {
  CHECK(st == CT_OK, "%s: %d %s", what, (int)st, ct_last_error_message());
  if (st != CT_OK) return;
  ct_tensor *r = *result;
  *result = NULL;
  double *v = NULL;
  OK(ct_tensor_data(r, (void **)&v));
  CHECK(v && fabs(v[0] - 14.0) < 1e-12, "%s: %g, want 14", what, v ? v[0] : -1.0);
  OK(ct_tensor_free(r));
}

int main(void) {
  double x_host[3] = {1, 2, 3};
  size_t shape[1] = {3};
  ct_tensor *x = NULL;
  OK(ct_tensor_from_host(CT_F64, 1, shape, CT_ROW_MAJOR, x_host, &x));
  ct_tensor *r = NULL;

  const ct_tensor *const_ops[2] = {x, x};
  check_dot("const ct_tensor *ops[]", ct_einsum("i,i->", 2, const_ops, NULL, &r), &r);
  const ct_tensor *const fixed_ops[2] = {x, x};
  check_dot("const ct_tensor *const ops[]", ct_einsum("i,i->", 2, fixed_ops, NULL, &r), &r);
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
  ct_tensor *mut_ops[2] = {x, x};
  check_dot("ct_tensor *ops[]", ct_einsum("i,i->", 2, mut_ops, NULL, &r), &r);
  ct_tensor *const mut_fixed[2] = {x, x};
  check_dot("ct_tensor *const ops[]", ct_einsum("i,i->", 2, mut_fixed, NULL, &r), &r);
  ct_tensor **as_pointer = mut_ops;
  check_dot("ct_tensor **", ct_einsum("i,i->", 2, as_pointer, NULL, &r), &r);
#endif

  /* ct_einsum_into takes the same array: out = x ∘ x into a zeroed tensor. */
  ct_tensor *out = NULL;
  OK(ct_tensor_zeros(CT_F64, CT_CPU, 1, shape, &out));
  OK(ct_einsum_into("i,i->i", 2, const_ops, NULL, out));
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
  ct_einsum_options opts = ct_einsum_default_options();
  opts.beta_re = 1.0;
  OK(ct_einsum_into("i,i->i", 2, mut_ops, &opts, out)); /* out += x ∘ x */
  const double factor = 2.0;
#else
  const double factor = 1.0;
#endif
  double *o = NULL;
  OK(ct_tensor_data(out, (void **)&o));
  for (int i = 0; i < 3; i++)
    CHECK(fabs(o[i] - factor * x_host[i] * x_host[i]) < 1e-12, "out[%d] = %g", i, o[i]);
  OK(ct_tensor_free(out));
  OK(ct_tensor_free(x));
  if (failures) {
    fprintf(stderr, "einsum_operands: %d failure(s)\n", failures);
    return 1;
  }
  printf("einsum_operands (C %ld): every operand array shape compiles and agrees\n",
         (long)__STDC_VERSION__);
  return 0;
}
