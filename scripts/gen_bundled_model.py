#!/usr/bin/env python3
"""Generate vinci's bundled model, models/mlp_tiny.onnx, with its test input
and the output NumPy computes for it (fixed seed, so the files are stable).

    y = Softmax(MatMul(Identity(x + Sigmoid(Gemm(Dropout(Relu(LayerNorm(x @ W1 + b1 * s))))))), W3))

x is f32[batch, 64] ("batch" symbolic). b1 * s is a product of two
initializers (constant folding), Dropout and Identity are removed at -O1.

Usage: .venv/bin/python scripts/gen_bundled_model.py [out_dir]   (default: models/)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D_IN, D_HID, D_OUT, BATCH = 64, 128, 10, 4


def weights(rng):
    return {
        "W1": (rng.standard_normal((D_IN, D_HID)) / np.sqrt(D_IN)).astype(np.float32),
        "b1_raw": rng.standard_normal(D_HID).astype(np.float32),
        "b1_scale": np.array([0.1], dtype=np.float32),
        "gamma": (1.0 + 0.1 * rng.standard_normal(D_HID)).astype(np.float32),
        "beta": (0.1 * rng.standard_normal(D_HID)).astype(np.float32),
        "W2": (rng.standard_normal((D_IN, D_HID)) / np.sqrt(D_HID)).astype(np.float32),
        "c2": (0.1 * rng.standard_normal(D_IN)).astype(np.float32),
        "W3": (rng.standard_normal((D_IN, D_OUT)) / np.sqrt(D_IN)).astype(np.float32),
    }


def build(w):
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h1"], name="fc1"),
        helper.make_node("Mul", ["b1_raw", "b1_scale"], ["b1"], name="bias_scale"),
        helper.make_node("Add", ["h1", "b1"], ["h1b"], name="fc1_bias"),
        helper.make_node("LayerNormalization", ["h1b", "gamma", "beta"], ["ln"], name="ln",
                         axis=-1, epsilon=1e-5),
        helper.make_node("Relu", ["ln"], ["r"], name="relu"),
        helper.make_node("Dropout", ["r"], ["d"], name="dropout"),
        helper.make_node("Gemm", ["d", "W2", "c2"], ["g2"], name="fc2", transB=1),
        helper.make_node("Sigmoid", ["g2"], ["s"], name="gate"),
        helper.make_node("Add", ["s", "x"], ["res"], name="residual"),
        helper.make_node("Identity", ["res"], ["res_id"], name="identity"),
        helper.make_node("MatMul", ["res_id", "W3"], ["logits"], name="fc3"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp_tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", D_IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", D_OUT])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="vinci gen_bundled_model.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def reference(w, x):
    h = x @ w["W1"] + w["b1_raw"] * w["b1_scale"]
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    ln = (h - mu) / np.sqrt(var + 1e-5) * w["gamma"] + w["beta"]
    r = np.maximum(ln, 0)
    g = r @ w["W2"].T + w["c2"]
    res = 1 / (1 + np.exp(-g)) + x
    logits = res @ w["W3"]
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def main():
    if len(sys.argv) > 2 or (len(sys.argv) > 1 and sys.argv[1].startswith("-")):
        sys.exit(__doc__.strip().splitlines()[-1])  # -h / --help: usage, not a folder named so
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "models")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20240611)
    w = weights(rng)
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    w64 = {k: v.astype(np.float64) for k, v in w.items()}
    onnx.save(build(w), os.path.join(out, "mlp_tiny.onnx"))
    np.save(os.path.join(out, "mlp_tiny_input.npy"), x)
    np.save(os.path.join(out, "mlp_tiny_expected.npy"), reference(w64, x.astype(np.float64)))
    print("wrote", os.path.join(out, "mlp_tiny.onnx"))


if __name__ == "__main__":
    main()
