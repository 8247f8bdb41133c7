/*
 * registry.c — the one table of operators. Built-in operators are registered
 * once, on first use of the registry, from the per-family tables; users add
 * their own with vn_op_register.
 *
 * Invariants: no two entries share name and domain; entries are never removed,
 * so a pointer returned by vn_op_find / vn_op_at stays valid forever; every
 * access to the table holds `lock`.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_internal.h"

/* one table per line (the formatter would pack them into columns) */
// clang-format off
static const vn_op_table_fn builtin_tables[] = {
    vn_ops_elementwise_table,
    vn_ops_fused_table,
    vn_ops_norm_table,
    vn_ops_softmax_table,
    vn_ops_conv_table,
    vn_ops_pool_table,
    vn_ops_convtranspose_table,
    vn_ops_matmul_table,
    vn_ops_batchnorm_table,
    vn_ops_shape_table,
    vn_ops_logic_table,
    vn_ops_math_table,
    vn_ops_cast_table,
    vn_ops_gather_table,
    vn_ops_reduce_table,
    vn_ops_scatter_table,
    vn_ops_misc_table,
    vn_ops_loss_table,
    vn_ops_attention_table,
    vn_ops_attention_fused_table,
    vn_ops_norm_misc_table,
    vn_ops_grid_sample_table,
    vn_ops_resize_table,
    vn_ops_extra_table,
    vn_ops_rnn_table,
    vn_ops_signal_table,
    vn_ops_quant_table,
};
// clang-format on

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const vn_op_def **table;
static int32_t table_len, table_cap;

static const char *norm_domain(const char *domain)
{
    return domain ? domain : "";
}

/* Caller holds `lock`. */
static const vn_op_def *find_locked(const char *name, const char *domain)
{
    for (int32_t i = 0; i < table_len; i++)
        if (strcmp(table[i]->name, name) == 0 && strcmp(norm_domain(table[i]->domain), domain) == 0)
            return table[i];
    return NULL;
}

/* Caller holds `lock`. */
static vn_status append_locked(const vn_op_def *def)
{
    if (table_len == table_cap) {
        int32_t cap = table_cap ? table_cap * 2 : 64;
        const vn_op_def **t = realloc(table, (size_t)cap * sizeof *t);
        if (!t)
            return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_op_register", "no memory for %d operators",
                            (int)cap);
        table = t;
        table_cap = cap;
    }
    table[table_len++] = def;
    return VN_OK;
}

static void register_builtins(void)
{
    pthread_mutex_lock(&lock);
    for (size_t t = 0; t < sizeof builtin_tables / sizeof builtin_tables[0]; t++) {
        int32_t count = 0;
        const vn_op_def *const *defs = builtin_tables[t](&count);
        for (int32_t i = 0; i < count; i++) append_locked(defs[i]);
    }
    pthread_mutex_unlock(&lock);
}

static void ensure_builtins(void)
{
    pthread_once(&once, register_builtins);
}

static vn_status check_def(const vn_op_def *def)
{
    const char *w = "vn_op_register";
    if (!def) return vn_error(VN_ERR_INVALID_ARG, w, "def is NULL");
    if (!def->name || !def->name[0]) return vn_error(VN_ERR_INVALID_ARG, w, "operator has no name");
    if (!def->infer || !def->run)
        return vn_error(VN_ERR_INVALID_ARG, w, "operator '%s' needs infer and run functions",
                        def->name);
    if (def->min_inputs < 0 || def->max_inputs < def->min_inputs || def->num_outputs < 1)
        return vn_error(VN_ERR_INVALID_ARG, w,
                        "operator '%s': inputs %d..%d and %d outputs are not a valid signature",
                        def->name, (int)def->min_inputs, (int)def->max_inputs,
                        (int)def->num_outputs);
    return VN_OK;
}

vn_status vn_op_register(const vn_op_def *def)
{
    vn_status st = check_def(def);
    if (st != VN_OK) return st;
    ensure_builtins();
    pthread_mutex_lock(&lock);
    const char *domain = norm_domain(def->domain);
    if (find_locked(def->name, domain)) {
        pthread_mutex_unlock(&lock);
        return vn_error(VN_ERR_INVALID_ARG, "vn_op_register",
                        "an operator '%s' is already registered in domain '%s'", def->name, domain);
    }
    st = append_locked(def);
    pthread_mutex_unlock(&lock);
    return st;
}

const vn_op_def *vn_op_find(const char *name, const char *domain)
{
    if (!name) return NULL;
    ensure_builtins();
    pthread_mutex_lock(&lock);
    const vn_op_def *d = find_locked(name, norm_domain(domain));
    pthread_mutex_unlock(&lock);
    return d;
}

const vn_op_def *vn_op_at(int32_t index)
{
    ensure_builtins();
    pthread_mutex_lock(&lock);
    const vn_op_def *d = index >= 0 && index < table_len ? table[index] : NULL;
    pthread_mutex_unlock(&lock);
    return d;
}
