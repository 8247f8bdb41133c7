#!/usr/bin/env python3
"""Writes the ONNX models the graph tests read (tests/graph/test_onnx_reader.c).

Usage: gen_test_models.py OUT_DIR   (needs the onnx and numpy packages: the
.venv that `scripts/setup.sh --python` creates). Each model is small and
deterministic; expected constants are written next to them as .npy files so
the C test compares against NumPy's own encoding.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(model, out, name, **kw):
    onnx.checker.check_model(model)
    onnx.save_model(model, os.path.join(out, name), **kw)


def add_relu(out):
    """y = Softmax(Relu(x + w)), x f32[batch, 4]."""
    w = numpy_helper.from_array(np.array([1, -2, 3, -4], np.float32), "w")
    nodes = [
        helper.make_node("Add", ["x", "w"], ["s"], name="add0"),
        helper.make_node("Relu", ["s"], ["r"], name="relu0"),
        helper.make_node("Softmax", ["r"], ["y"], name="softmax0", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "add_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])], [w])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out, "add_relu.onnx")


TYPED = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
    "i16": np.int16, "i32": np.int32, "i64": np.int64, "b": np.bool_, "u16": np.uint16,
}


def typed(out):
    """Initializers of every dtype, raw and in typed fields; Constant nodes."""
    rng = np.random.default_rng(0)
    inits = []
    for key, dt in TYPED.items():
        a = (rng.standard_normal((2, 3)) * 50).astype(dt)
        inits.append(numpy_helper.from_array(a, "raw_" + key))
        t = helper.make_tensor("typed_" + key, helper.np_dtype_to_tensor_dtype(np.dtype(dt)),
                               a.shape, a.flatten().tolist(), raw=False)
        inits.append(t)
        np.save(os.path.join(out, "typed_%s.npy" % key), a)
    bf = np.array([1.0, -2.5, 3.25], np.float32)
    inits.append(helper.make_tensor("typed_bf16", TensorProto.BFLOAT16, [3], bf.tolist()))
    nodes = [
        helper.make_node("Constant", [], ["c_float"], value_float=2.5),
        helper.make_node("Constant", [], ["c_ints"], value_ints=[3, -1, 7]),
        helper.make_node("Constant", [], ["c_tensor"],
                         value=numpy_helper.from_array(np.arange(6, dtype=np.int32).reshape(2, 3))),
        helper.make_node("Add", ["x", "raw_f32"], ["y"], name="add"),
    ]
    g = helper.make_graph(
        nodes, "typed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out, "typed.onnx")


def external(out):
    """Weights in a file next to the model."""
    w = np.arange(1024, dtype=np.float32)
    b = np.arange(16, dtype=np.int64)
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    g = helper.make_graph(
        nodes, "external", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1024])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    save(m, out, "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
         location="external.bin", size_threshold=0)
    np.save(os.path.join(out, "external_w.npy"), w)


def control_flow(out):
    """If and Loop with subgraphs that read outer values; a custom-domain op."""
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [4])])
    nodes = [
        helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["n", "", "y"], ["z"], name="loop0", body=body),
        helper.make_node("FusedThing", ["z"], ["out"], name="custom0", domain="com.example"),
    ]
    g = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.example", 1)])
    onnx.save_model(m, os.path.join(out, "control_flow.onnx"))  # custom op: no checker


def rnn_relu(out):
    """RNN with a string-list attribute (activations=["Relu"]); the expected Y
    is computed here in NumPy (float64) so the C test checks that the
    attribute reaches the operator."""
    rng = np.random.default_rng(7)
    steps, batch, inp, hid = 5, 2, 3, 4
    w = rng.standard_normal((1, hid, inp)).astype(np.float32)
    r = (rng.standard_normal((1, hid, hid)) * 0.5).astype(np.float32)
    x = rng.standard_normal((steps, batch, inp)).astype(np.float32)
    node = helper.make_node("RNN", ["x", "w", "r"], ["y"], name="rnn0", hidden_size=hid,
                            activations=["Relu"])
    g = helper.make_graph(
        [node], "rnn_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, 1, batch, hid])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), out, "rnn_relu.onnx")
    h = np.zeros((batch, hid))
    ys = []
    for t in range(steps):
        h = np.maximum(x[t].astype(np.float64) @ w[0].T + h @ r[0].T, 0)
        ys.append(h.copy())
    np.save(os.path.join(out, "rnn_relu_x.npy"), x)
    np.save(os.path.join(out, "rnn_relu_y.npy"), np.stack(ys)[:, None].astype(np.float32))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in (add_relu, typed, external, control_flow, rnn_relu):
        make(out)


if __name__ == "__main__":
    main()
