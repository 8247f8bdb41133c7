/*
 * rnn_act.c — the activation functions the recurrent operators accept in
 * their "activations" attribute, with the defaults of the ONNX operators of
 * the same names for alpha and beta.
 */
#include <math.h>
#include <strings.h>

#include "ops/rnn.h"

static float act_relu(float x, float a, float b)
{
    (void)a, (void)b;
    return x > 0 ? x : 0;
}
static float act_tanh(float x, float a, float b)
{
    (void)a, (void)b;
    return tanhf(x);
}
static float act_sigmoid(float x, float a, float b)
{
    (void)a, (void)b;
    return 1.0f / (1.0f + expf(-x));
}
static float act_affine(float x, float a, float b)
{
    return a * x + b;
}
static float act_leaky_relu(float x, float a, float b)
{
    (void)b;
    return x >= 0 ? x : a * x;
}
static float act_thresholded_relu(float x, float a, float b)
{
    (void)b;
    return x > a ? x : 0;
}
static float act_scaled_tanh(float x, float a, float b)
{
    return a * tanhf(b * x);
}
static float act_hard_sigmoid(float x, float a, float b)
{
    float y = a * x + b;
    return y < 0 ? 0 : y > 1 ? 1 : y;
}
static float act_elu(float x, float a, float b)
{
    (void)b;
    return x >= 0 ? x : a * (expf(x) - 1.0f);
}
static float act_softsign(float x, float a, float b)
{
    (void)a, (void)b;
    return x / (1.0f + fabsf(x));
}
static float act_softplus(float x, float a, float b)
{
    (void)a, (void)b;
    return x > 20 ? x : log1pf(expf(x));
}

typedef struct act_entry {
    const char *name;
    vn_rnn_act_fn fn;
    bool uses_alpha, uses_beta;
    float alpha, beta;
} act_entry;

static const act_entry acts[] = {
    {"Relu", act_relu, false, false, 0, 0},
    {"Tanh", act_tanh, false, false, 0, 0},
    {"Sigmoid", act_sigmoid, false, false, 0, 0},
    {"Affine", act_affine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", act_leaky_relu, true, false, 0.01f, 0},
    {"ThresholdedRelu", act_thresholded_relu, true, false, 1.0f, 0},
    {"ScaledTanh", act_scaled_tanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", act_hard_sigmoid, true, true, 0.2f, 0.5f},
    {"Elu", act_elu, true, false, 1.0f, 0},
    {"Softsign", act_softsign, false, false, 0, 0},
    {"Softplus", act_softplus, false, false, 0, 0},
};

vn_status vn_rnn_act_lookup(const char *where, const char *name, vn_rnn_act *act, bool *uses_alpha,
                            bool *uses_beta)
{
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        if (strcasecmp(acts[i].name, name) != 0) continue;
        act->fn = acts[i].fn;
        act->alpha = acts[i].alpha;
        act->beta = acts[i].beta;
        *uses_alpha = acts[i].uses_alpha;
        *uses_beta = acts[i].uses_beta;
        return VN_OK;
    }
    return vn_error(VN_ERR_UNSUPPORTED, where, "activation '%s' is not supported", name);
}
