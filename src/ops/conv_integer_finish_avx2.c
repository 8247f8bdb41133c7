/* conv_integer_finish_avx2.c — the requantisation loop with the avx2 flags. */
#include "ops/conv_integer.h"

#define CI_FINISH_NAME vn_ci_requant_avx2
#include "ops/conv_integer_finish.inc"
