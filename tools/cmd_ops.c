/*
 * cmd_ops.c — `vinci ops`: the operator registry, one line per operator.
 */
#include <stdio.h>

#include "cli.h"
#include "vinci/vinci.h"

int vn_cmd_ops(int argc, char **argv)
{
    (void)argc, (void)argv;
    int32_t i = 0;
    for (const vn_op_def *d; (d = vn_op_at(i)) != NULL; i++) {
        printf("%-28s domain %-6s inputs %d..%d outputs %d dtypes", d->name,
               d->domain && d->domain[0] ? d->domain : "onnx", d->min_inputs, d->max_inputs,
               d->num_outputs);
        for (int t = 0; t < VN_DTYPE_COUNT; t++)
            if (d->dtypes & VN_DTYPE_BIT(t)) printf(" %s", vn_dtype_name((vn_dtype)t));
        printf("\n");
    }
    printf("%d operators\n", i);
    return 0;
}
