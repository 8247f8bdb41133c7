#!/usr/bin/env python3
"""Generate the end-to-end test / benchmark models with onnx.helper and numpy
random weights (fixed seed; nothing is downloaded). The graphs are written the
way the PyTorch exporter writes them for the torchvision / HF architectures:

  resnet18, resnet50   Conv(no bias) -> BatchNormalization -> Relu, MaxPool,
                       residual Add, GlobalAveragePool, Flatten, Gemm(transB=1)
  mobilenetv2          Conv -> BatchNormalization -> Clip(0, 6) (ReLU6),
                       depthwise Conv (group=C), residual Add, GAP, Flatten, Gemm
  squeezenet11         Conv(+bias) -> Relu, MaxPool(ceil_mode=1), Fire modules
                       (Concat), final 1x1 Conv -> Relu -> GAP -> Flatten
  transformer          encoder, d 256, 4 heads, 4 layers, ffn 1024, seq 128:
                       MatMul+Add projections, Reshape/Transpose to heads,
                       MatMul QK^T, Div sqrt(dk), Softmax, MatMul V, output
                       projection, residual Add, LayerNormalization, GELU as
                       x * 0.5 * (1 + Erf(x / sqrt 2))
  bert_base            BERT-base-shaped encoder: 12 layers, d 768, 12 heads,
                       ffn 3072, seq 128, vocab 30522: input_ids (int64) ->
                       Gather word/position/token-type embeddings, the extended
                       attention mask (Unsqueeze, Cast, Sub, Mul -10000, Add),
                       and LayerNorm written as the ReduceMean/Sub/Pow/Sqrt/Div
                       chain; GELU (Erf form)

resnet18_nobn, resnet50_nobn, mobilenetv2_nobn: the same models with every
BatchNormalization folded into the preceding Conv (torch.onnx.export's eval-mode
output with constant folding).

All models take batch 1 (images 1x3x224x224, sequences 128) with static shapes.
Each model is written as <out>/<name>.onnx (BERT-base is ~440 MB: keep the
output in a build directory, never in the repository).

Usage: .venv/bin/python scripts/gen_models.py [--out build/models] [--models a,b,...]
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
ALL = ["transformer", "squeezenet11", "mobilenetv2", "resnet18", "resnet50", "bert_base",
       "mobilenetv2_nobn", "resnet18_nobn", "resnet50_nobn"]


class G:
    """A tiny graph builder: unique names, initializers, nodes."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], {}

    def uid(self, base):
        n = self.count.get(base, 0)
        self.count[base] = n + 1
        return f"{base}_{n}" if n else base

    def const(self, base, arr):
        name = self.uid(base)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op, inputs, base=None, n_out=1, **attrs):
        nm = self.uid(base or op.lower())
        outs = [nm if n_out == 1 else f"{nm}:{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=nm, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, inputs, outputs):
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="vinci scripts/gen_models.py")
        m.ir_version = 8
        return m

    # --- random weights -------------------------------------------------
    def normal(self, shape, std):
        return (self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std))

    # --- CNN pieces ----------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, pad=0, group=1, bias=False, base="conv"):
        fan_in = cin // group * k * k
        w = self.const(base + ".weight", self.normal((cout, cin // group, k, k),
                                                     np.sqrt(2.0 / fan_in)))
        ins = [x, w]
        if bias:
            ins.append(self.const(base + ".bias", self.normal((cout,), 0.05)))
        return self.node("Conv", ins, base, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group, dilations=[1, 1])

    def bn(self, x, c, base="bn", gamma_scale=1.0):
        r = self.rng
        gamma = (gamma_scale * (1.0 + 0.1 * r.standard_normal(c))).astype(np.float32)
        beta = (0.1 * r.standard_normal(c)).astype(np.float32)
        mean = (0.1 * r.standard_normal(c)).astype(np.float32)
        var = (1.0 + 0.2 * r.random(c)).astype(np.float32)
        ins = [x] + [self.const(f"{base}.{n}", a) for n, a in
                     (("weight", gamma), ("bias", beta), ("running_mean", mean),
                      ("running_var", var))]
        return self.node("BatchNormalization", ins, base, epsilon=1e-5, momentum=0.9)

    def relu(self, x):
        return self.node("Relu", [x])

    def head(self, x, cin, ncls=1000):
        x = self.node("GlobalAveragePool", [x])
        x = self.node("Flatten", [x], axis=1)
        w = self.const("fc.weight", self.normal((ncls, cin), 1.0 / np.sqrt(cin)))
        b = self.const("fc.bias", self.normal((ncls,), 0.01))
        return self.node("Gemm", [x, w, b], "fc", alpha=1.0, beta=1.0, transB=1)


def img_io(out, ncls=1000):
    return ([helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, ncls])])


def resnet(depth):
    g = G(f"resnet{depth}", seed=depth)
    bottleneck = depth == 50
    layers = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[depth]
    x = g.conv("input", 3, 64, 7, 2, 3, base="conv1")
    x = g.relu(g.bn(x, 64, "bn1"))
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin, exp = 64, (4 if bottleneck else 1)
    for li, (n, width) in enumerate(zip(layers, [64, 128, 256, 512])):
        for bi in range(n):
            stride = 2 if (bi == 0 and li > 0) else 1
            p = f"layer{li + 1}.{bi}"
            idt = x
            if bottleneck:
                y = g.relu(g.bn(g.conv(x, cin, width, 1, base=p + ".conv1"), width, p + ".bn1"))
                y = g.relu(g.bn(g.conv(y, width, width, 3, stride, 1, base=p + ".conv2"),
                                width, p + ".bn2"))
                y = g.bn(g.conv(y, width, width * 4, 1, base=p + ".conv3"), width * 4,
                         p + ".bn3", gamma_scale=0.3)
            else:
                y = g.relu(g.bn(g.conv(x, cin, width, 3, stride, 1, base=p + ".conv1"),
                                width, p + ".bn1"))
                y = g.bn(g.conv(y, width, width, 3, 1, 1, base=p + ".conv2"), width,
                         p + ".bn2", gamma_scale=0.3)
            cout = width * exp
            if stride != 1 or cin != cout:
                idt = g.bn(g.conv(x, cin, cout, 1, stride, base=p + ".downsample.0"), cout,
                           p + ".downsample.1")
            x = g.relu(g.node("Add", [y, idt]))
            cin = cout
    out = g.head(x, cin)
    ins, outs = img_io(out)
    return g.model(ins, outs)


def mobilenetv2():
    g = G("mobilenetv2", seed=2)
    zero = g.const("clip_min", np.array(0.0, np.float32))
    six = g.const("clip_max", np.array(6.0, np.float32))

    def cbr(x, cin, cout, k, s, group, base, act=True):
        y = g.bn(g.conv(x, cin, cout, k, s, (k - 1) // 2, group, base=base + ".0"), cout,
                 base + ".1", gamma_scale=1.0 if act else 0.5)
        return g.node("Clip", [y, zero, six]) if act else y

    x = cbr("input", 3, 32, 3, 2, 1, "features.0")
    cin, idx = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            p = f"features.{idx}.conv"
            y = x
            if t != 1:
                y = cbr(y, cin, hid, 1, 1, 1, p + ".0")
            y = cbr(y, hid, hid, 3, stride, hid, p + ".dw")
            y = cbr(y, hid, c, 1, 1, 1, p + ".pw", act=False)
            x = g.node("Add", [x, y]) if stride == 1 and cin == c else y
            cin, idx = c, idx + 1
    x = cbr(x, cin, 1280, 1, 1, 1, f"features.{idx}")
    out = g.head(x, 1280)
    ins, outs = img_io(out)
    return g.model(ins, outs)


def squeezenet11():
    g = G("squeezenet11", seed=11)

    def fire(x, cin, sq, e1, e3, p):
        s = g.relu(g.conv(x, cin, sq, 1, bias=True, base=p + ".squeeze"))
        a = g.relu(g.conv(s, sq, e1, 1, bias=True, base=p + ".expand1x1"))
        b = g.relu(g.conv(s, sq, e3, 3, 1, 1, bias=True, base=p + ".expand3x3"))
        return g.node("Concat", [a, b], p + ".cat", axis=1)

    def pool(x):
        return g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2],
                      pads=[0] * 4, ceil_mode=1)

    x = g.relu(g.conv("input", 3, 64, 3, 2, bias=True, base="features.0"))
    x = pool(x)
    x = fire(x, 64, 16, 64, 64, "features.3")
    x = fire(x, 128, 16, 64, 64, "features.4")
    x = pool(x)
    x = fire(x, 128, 32, 128, 128, "features.6")
    x = fire(x, 256, 32, 128, 128, "features.7")
    x = pool(x)
    x = fire(x, 256, 48, 192, 192, "features.9")
    x = fire(x, 384, 48, 192, 192, "features.10")
    x = fire(x, 384, 64, 256, 256, "features.11")
    x = fire(x, 512, 64, 256, 256, "features.12")
    x = g.relu(g.conv(x, 512, 1000, 1, bias=True, base="classifier.1"))
    x = g.node("GlobalAveragePool", [x])
    out = g.node("Flatten", [x], "flatten", axis=1)
    ins, outs = img_io(out)
    return g.model(ins, outs)


# --- transformers -----------------------------------------------------------

def linear(g, x, din, dout, base):
    w = g.const(base + ".weight", g.normal((din, dout), 0.02 if din >= 512 else 1.0 / np.sqrt(din)))
    b = g.const(base + ".bias", g.normal((dout,), 0.02))
    return g.node("Add", [g.node("MatMul", [x, w], base + ".matmul"), b], base + ".add")


def gelu_erf(g, x):
    d = g.node("Div", [x, g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))])
    e = g.node("Erf", [d])
    a = g.node("Add", [e, g.const("one", np.array(1.0, np.float32))])
    m = g.node("Mul", [x, a])
    return g.node("Mul", [m, g.const("half", np.array(0.5, np.float32))])


def layernorm(g, x, d, base, decomposed):
    gamma = g.const(base + ".weight", (1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32))
    beta = g.const(base + ".bias", (0.1 * g.rng.standard_normal(d)).astype(np.float32))
    if not decomposed:
        return g.node("LayerNormalization", [x, gamma, beta], base, axis=-1, epsilon=1e-5)
    # torch.onnx (opset < 17) / HF BERT: the ReduceMean/Sub/Pow/Sqrt/Div chain
    mu = g.node("ReduceMean", [x], base + ".mean", axes=[-1], keepdims=1)
    c = g.node("Sub", [x, mu], base + ".sub")
    p = g.node("Pow", [c, g.const("two", np.array(2.0, np.float32))], base + ".pow")
    v = g.node("ReduceMean", [p], base + ".var", axes=[-1], keepdims=1)
    v = g.node("Add", [v, g.const("eps", np.array(1e-12, np.float32))], base + ".addeps")
    s = g.node("Sqrt", [v], base + ".sqrt")
    n = g.node("Div", [c, s], base + ".div")
    return g.node("Add", [g.node("Mul", [n, gamma], base + ".mul"), beta], base + ".addb")


def encoder_layer(g, x, d, heads, ffn, seq, p, decomposed, mask=None):
    dk = d // heads
    split = g.const("shape_heads", np.array([1, seq, heads, dk], np.int64))
    merge = g.const("shape_merge", np.array([1, seq, d], np.int64))

    def heads_of(y, perm):
        return g.node("Transpose", [g.node("Reshape", [y, split])], perm=perm)

    q = heads_of(linear(g, x, d, d, p + ".attn.q"), [0, 2, 1, 3])      # 1,h,s,dk
    k = heads_of(linear(g, x, d, d, p + ".attn.k"), [0, 2, 3, 1])      # 1,h,dk,s
    v = heads_of(linear(g, x, d, d, p + ".attn.v"), [0, 2, 1, 3])      # 1,h,s,dk
    s = g.node("MatMul", [q, k], p + ".attn.qk")
    s = g.node("Div", [s, g.const("sqrt_dk", np.array(np.sqrt(dk), np.float32))], p + ".attn.scale")
    if mask is not None:
        s = g.node("Add", [s, mask], p + ".attn.mask")
    a = g.node("Softmax", [s], p + ".attn.softmax", axis=-1)
    o = g.node("MatMul", [a, v], p + ".attn.av")
    o = g.node("Reshape", [g.node("Transpose", [o], perm=[0, 2, 1, 3]), merge])
    o = linear(g, o, d, d, p + ".attn.out")
    x = layernorm(g, g.node("Add", [o, x], p + ".res1"), d, p + ".ln1", decomposed)
    h = gelu_erf(g, linear(g, x, d, ffn, p + ".ffn.fc1"))
    h = linear(g, h, ffn, d, p + ".ffn.fc2")
    return layernorm(g, g.node("Add", [h, x], p + ".res2"), d, p + ".ln2", decomposed)


def transformer(d=256, heads=4, layers=4, ffn=1024, seq=128):
    g = G("transformer", seed=256)
    x = "input"
    for i in range(layers):
        x = encoder_layer(g, x, d, heads, ffn, seq, f"layers.{i}", decomposed=False)
    out = g.node("Identity", [x], "output")
    return g.model([helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, seq, d])],
                   [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, seq, d])])


def bert_base(d=768, heads=12, layers=12, ffn=3072, seq=128, vocab=30522):
    g = G("bert_base", seed=768)
    word = g.const("embeddings.word_embeddings.weight", g.normal((vocab, d), 0.02))
    pos = g.const("embeddings.position_embeddings.weight", g.normal((512, d), 0.02))
    tok = g.const("embeddings.token_type_embeddings.weight", g.normal((2, d), 0.02))
    pos_ids = g.const("position_ids", np.arange(seq, dtype=np.int64)[None, :])
    tok_ids = g.const("token_type_ids", np.zeros((1, seq), np.int64))
    e = g.node("Add", [g.node("Gather", [word, "input_ids"], axis=0),
                       g.node("Gather", [tok, tok_ids], axis=0)])
    e = g.node("Add", [e, g.node("Gather", [pos, pos_ids], axis=0)])
    x = layernorm(g, e, d, "embeddings.LayerNorm", decomposed=True)
    # extended attention mask: (1 - mask[:, None, None, :]) * -10000
    m = g.node("Unsqueeze", ["attention_mask", g.const("axes12", np.array([1, 2], np.int64))])
    m = g.node("Cast", [m], to=TensorProto.FLOAT)
    m = g.node("Sub", [g.const("one_f", np.array(1.0, np.float32)), m])
    mask = g.node("Mul", [m, g.const("neg_inf", np.array(-10000.0, np.float32))], "ext_mask")
    for i in range(layers):
        x = encoder_layer(g, x, d, heads, ffn, seq, f"encoder.layer.{i}", True, mask)
    out = g.node("Identity", [x], "last_hidden_state")
    return g.model(
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, seq]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, seq])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, seq, d])])


def fold_bn(model):
    """The same model with every Conv -> BatchNormalization pair folded into
    the Conv's weight and bias (what torch.onnx.export does in eval mode with
    constant folding): the '<name>_nobn' variants."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    arr = {k: numpy_helper.to_array(v) for k, v in inits.items()}
    producer = {o: n for n in g.node for o in n.output}
    uses = {}
    for n in g.node:
        for i in n.input:
            uses[i] = uses.get(i, 0) + 1
    keep, rename = [], {}
    for n in g.node:
        conv = producer.get(n.input[0]) if n.op_type == "BatchNormalization" else None
        if conv is None or conv.op_type != "Conv" or uses[n.input[0]] != 1:
            keep.append(n)
            continue
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (arr[i] for i in n.input[1:5])
        scale = gamma / np.sqrt(var + eps)
        w = arr[conv.input[1]] * scale[:, None, None, None]
        b = arr[conv.input[2]] if len(conv.input) > 2 else np.zeros_like(mean)
        b = (b - mean) * scale + beta
        inits[conv.input[1]].CopyFrom(numpy_helper.from_array(w.astype(np.float32), conv.input[1]))
        bname = conv.name + ".bias_folded"
        g.initializer.append(numpy_helper.from_array(b.astype(np.float32), bname))
        del conv.input[2:]
        conv.input.append(bname)
        rename[n.output[0]] = conv.output[0]
    for n in keep:
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
    for o in g.output:
        assert o.name not in rename, "fold_bn: a graph output is a BatchNormalization"
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in g.node for i in n.input}
    live = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(live)
    g.name += "_nobn"
    return model


BUILDERS = {
    "resnet18": lambda: resnet(18),
    "resnet50": lambda: resnet(50),
    "mobilenetv2": mobilenetv2,
    "squeezenet11": squeezenet11,
    "transformer": transformer,
    "bert_base": bert_base,
}
for _n in ("resnet18", "resnet50", "mobilenetv2"):
    BUILDERS[_n + "_nobn"] = (lambda f: lambda: fold_bn(f()))(BUILDERS[_n])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="build/models")
    ap.add_argument("--models", default=",".join(ALL), help="comma list of " + ",".join(ALL))
    ap.add_argument("--force", action="store_true", help="rewrite existing files")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        if name not in BUILDERS:
            sys.exit(f"gen_models: unknown model '{name}' (known: {', '.join(ALL)})")
        path = os.path.join(args.out, name + ".onnx")
        if os.path.exists(path) and not args.force:
            print(f"{name:14s} exists: {path}")
            continue
        t0 = time.time()
        m = BUILDERS[name]()
        onnx.checker.check_model(m, full_check=True)  # < 2 GB: in-memory check
        tmp = path + ".tmp"
        onnx.save(m, tmp)
        os.replace(tmp, path)
        nparams = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
        print(f"{name:14s} {len(m.graph.node):5d} nodes {nparams / 1e6:7.2f} M params "
              f"{os.path.getsize(path) / 2**20:8.1f} MiB  {time.time() - t0:5.1f} s -> {path}")


if __name__ == "__main__":
    main()
