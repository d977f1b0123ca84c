/* CHECK and OK for the C clients (tests/c/client.c, tests/c/dlpack.c): a failed
 * condition prints the file, line and message and counts a failure; OK checks a
 * ct_status call and prints ctensor's message. */
#ifndef CTENSOR_TEST_CHECK_H
#define CTENSOR_TEST_CHECK_H
#include <stdio.h>

static int failures = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);      \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      failures++;                                          \
    }                                                      \
  } while (0)

#define OK(call)                                                                     \
  do {                                                                               \
    ct_status s_ = (call);                                                           \
    CHECK(s_ == CT_OK, "%s failed: %d %s", #call, (int)s_, ct_last_error_message()); \
  } while (0)

#endif
