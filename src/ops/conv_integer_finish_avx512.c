/* conv_integer_finish_avx512.c — the requantisation loop with the avx512 flags. */
#include "ops/conv_integer.h"

#define CI_FINISH_NAME vn_ci_requant_avx512
#include "ops/conv_integer_finish.inc"
