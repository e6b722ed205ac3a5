#!/usr/bin/env python3
"""Writes the kernel suite: benchmarks/suite/{small,full}/<problem>.mlir.

Each problem is one function of linalg on tensors, in two sizes: `small` for
tests (milliseconds per run, also for the unscheduled reference) and `full`
for benchmarks. Run it after editing the problem list; the files are checked
in so that tests do not depend on Python.
"""
import os
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def t(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def fn(name, args, body, result):
    sig = ", ".join(f"%{n}: {ty}" for n, ty in args)
    return (f"func.func @{name}({sig}) -> {result} {{\n"
            + textwrap.indent(textwrap.dedent(body).strip(), "  ")
            + f"\n}}\n")


def matmul(name, m, n, k, dtype="f32", acc="f32", tb=False):
    b = t((n, k) if tb else (k, n), dtype)
    maps = ""
    if tb:
        maps = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
                "affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]\n      ")
    body = f"""
    %z = arith.constant 0.0 : {acc}
    %e = tensor.empty() : {t((m, n), acc)}
    %c = linalg.fill ins(%z : {acc}) outs(%e : {t((m, n), acc)}) -> {t((m, n), acc)}
    %r = linalg.matmul {maps}ins(%a, %b : {t((m, k), dtype)}, {b}) outs(%c : {t((m, n), acc)}) -> {t((m, n), acc)}
    return %r : {t((m, n), acc)}
    """
    return fn(name, [("a", t((m, k), dtype)), ("b", b)], body, t((m, n), acc))


def batch_matmul(name, bs, m, n, k, dtype="f32"):
    body = f"""
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : {t((bs, m, n), 'f32')}
    %c = linalg.fill ins(%z : f32) outs(%e : {t((bs, m, n), 'f32')}) -> {t((bs, m, n), 'f32')}
    %r = linalg.batch_matmul ins(%a, %b : {t((bs, m, k), dtype)}, {t((bs, k, n), dtype)}) outs(%c : {t((bs, m, n), 'f32')}) -> {t((bs, m, n), 'f32')}
    return %r : {t((bs, m, n), 'f32')}
    """
    return fn(name, [("a", t((bs, m, k), dtype)), ("b", t((bs, k, n), dtype))],
              body, t((bs, m, n), "f32"))


def matvec(name, m, k):
    body = f"""
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : {t((m,), 'f32')}
    %c = linalg.fill ins(%z : f32) outs(%e : {t((m,), 'f32')}) -> {t((m,), 'f32')}
    %r = linalg.matvec ins(%a, %x : {t((m, k), 'f32')}, {t((k,), 'f32')}) outs(%c : {t((m,), 'f32')}) -> {t((m,), 'f32')}
    return %r : {t((m,), 'f32')}
    """
    return fn(name, [("a", t((m, k), "f32")), ("x", t((k,), "f32"))], body, t((m,), "f32"))


def conv(name, op, inp, flt, out, strides, dilations, dims):
    body = f"""
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : {t(out, 'f32')}
    %c = linalg.fill ins(%z : f32) outs(%e : {t(out, 'f32')}) -> {t(out, 'f32')}
    %r = linalg.{op} {{dilations = dense<{dilations}> : tensor<{dims}xi64>, strides = dense<{strides}> : tensor<{dims}xi64>}}
         ins(%i, %f : {t(inp, 'f32')}, {t(flt, 'f32')}) outs(%c : {t(out, 'f32')}) -> {t(out, 'f32')}
    return %r : {t(out, 'f32')}
    """
    return fn(name, [("i", t(inp, "f32")), ("f", t(flt, "f32"))], body, t(out, "f32"))


def pool(name, kind, inp, window, out, stride, layout="nhwc"):
    init = "-3.40282347E+38" if kind == "max" else "0.0"
    scale = ""
    ret = "%r"
    if kind == "avg":
        scale = f"""
    %s = arith.constant {1.0 / (window * window)} : f32
    %avg = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
        ins(%r : {t(out, 'f32')}) outs(%e : {t(out, 'f32')}) {{
      ^bb0(%x: f32, %o: f32):
        %y = arith.mulf %x, %s : f32
        linalg.yield %y : f32
    }} -> {t(out, 'f32')}"""
        ret = "%avg"
    op = f"pooling_{layout}_max" if kind == "max" else f"pooling_{layout}_sum"
    body = f"""
    %z = arith.constant {init} : f32
    %w = tensor.empty() : {t((window, window), 'f32')}
    %e = tensor.empty() : {t(out, 'f32')}
    %c = linalg.fill ins(%z : f32) outs(%e : {t(out, 'f32')}) -> {t(out, 'f32')}
    %r = linalg.{op} {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
         ins(%i, %w : {t(inp, 'f32')}, {t((window, window), 'f32')}) outs(%c : {t(out, 'f32')}) -> {t(out, 'f32')}{scale}
    return {ret} : {t(out, 'f32')}
    """
    return fn(name, [("i", t(inp, "f32"))], body, t(out, "f32"))


def reduce(name, kind, rows, cols):
    combine = {"sum": "arith.addf", "mean": "arith.addf", "max": "arith.maximumf"}[kind]
    init = "-3.40282347E+38" if kind == "max" else "0.0"
    post = ""
    ret = "%r"
    if kind == "mean":
        post = f"""
    %n = arith.constant {1.0 / cols} : f32
    %m = linalg.generic {{indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> (a)>], iterator_types = ["parallel"]}}
        ins(%r : {t((rows,), 'f32')}) outs(%e : {t((rows,), 'f32')}) {{
      ^bb0(%v: f32, %o: f32):
        %y = arith.mulf %v, %n : f32
        linalg.yield %y : f32
    }} -> {t((rows,), 'f32')}"""
        ret = "%m"
    body = f"""
    %z = arith.constant {init} : f32
    %e = tensor.empty() : {t((rows,), 'f32')}
    %c = linalg.fill ins(%z : f32) outs(%e : {t((rows,), 'f32')}) -> {t((rows,), 'f32')}
    %r = linalg.reduce ins(%x : {t((rows, cols), 'f32')}) outs(%c : {t((rows,), 'f32')}) dimensions = [1]
      (%v: f32, %acc: f32) {{
        %s = {combine} %v, %acc : f32
        linalg.yield %s : f32
      }}{post}
    return {ret} : {t((rows,), 'f32')}
    """
    return fn(name, [("x", t((rows, cols), "f32"))], body, t((rows,), "f32"))


def global_sum(name, n):
    body = f"""
    %z = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<f32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %r = linalg.reduce ins(%x : {t((n,), 'f32')}) outs(%c : tensor<f32>) dimensions = [0]
      (%v: f32, %acc: f32) {{
        %s = arith.addf %v, %acc : f32
        linalg.yield %s : f32
      }}
    return %r : tensor<f32>
    """
    return fn(name, [("x", t((n,), "f32"))], body, "tensor<f32>")


def argmax(name, rows, cols):
    body = f"""
    %ninf = arith.constant -3.40282347E+38 : f32
    %zero = arith.constant 0 : i32
    %ev = tensor.empty() : {t((rows,), 'f32')}
    %ei = tensor.empty() : {t((rows,), 'i32')}
    %cv = linalg.fill ins(%ninf : f32) outs(%ev : {t((rows,), 'f32')}) -> {t((rows,), 'f32')}
    %ci = linalg.fill ins(%zero : i32) outs(%ei : {t((rows,), 'i32')}) -> {t((rows,), 'i32')}
    %r:2 = linalg.generic {{indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a)>, affine_map<(a, b) -> (a)>], iterator_types = ["parallel", "reduction"]}}
        ins(%x : {t((rows, cols), 'f32')}) outs(%cv, %ci : {t((rows,), 'f32')}, {t((rows,), 'i32')}) {{
      ^bb0(%v: f32, %best: f32, %idx: i32):
        %j = linalg.index 1 : index
        %ji = arith.index_cast %j : index to i32
        %gt = arith.cmpf ogt, %v, %best : f32
        %nb = arith.select %gt, %v, %best : f32
        %ni = arith.select %gt, %ji, %idx : i32
        linalg.yield %nb, %ni : f32, i32
    }} -> ({t((rows,), 'f32')}, {t((rows,), 'i32')})
    return %r#1 : {t((rows,), 'i32')}
    """
    return fn(name, [("x", t((rows, cols), "f32"))], body, t((rows,), "i32"))


def softmax(name, rows, cols, dtype="f32"):
    body = f"""
    %e = tensor.empty() : {t((rows, cols), dtype)}
    %r = linalg.softmax dimension(1) ins(%x : {t((rows, cols), dtype)}) outs(%e : {t((rows, cols), dtype)}) -> {t((rows, cols), dtype)}
    return %r : {t((rows, cols), dtype)}
    """
    return fn(name, [("x", t((rows, cols), dtype))], body, t((rows, cols), dtype))


ROW = "affine_map<(a, b) -> (a)>"
ID2 = "affine_map<(a, b) -> (a, b)>"
COL = "affine_map<(a, b) -> (b)>"


def row_reduce(res, src, init, rows, cols, body_ops, ins_extra=""):
    """A generic reducing each row of src (and optional extra row inputs)."""
    return f"""
    %{res}i = linalg.fill ins(%{init} : f32) outs(%er : {t((rows,), 'f32')}) -> {t((rows,), 'f32')}
    %{res} = linalg.generic {{indexing_maps = [{ID2}{', ' + ROW if ins_extra else ''}, {ROW}], iterator_types = ["parallel", "reduction"]}}
        ins(%{src}{', %' + ins_extra if ins_extra else ''} : {t((rows, cols), 'f32')}{', ' + t((rows,), 'f32') if ins_extra else ''}) outs(%{res}i : {t((rows,), 'f32')}) {{
      ^bb0(%v: f32, {'%p: f32, ' if ins_extra else ''}%acc: f32):
        {body_ops}
    }} -> {t((rows,), 'f32')}"""


def elementwise_rows(res, src, row_inputs, rows, cols, body_ops, cols_inputs=()):
    maps = [ID2] + [ROW] * len(row_inputs) + [COL] * len(cols_inputs) + [ID2]
    ins = [f"%{src}"] + [f"%{r}" for r in row_inputs] + [f"%{c}" for c in cols_inputs]
    types = ([t((rows, cols), 'f32')] + [t((rows,), 'f32')] * len(row_inputs)
             + [t((cols,), 'f32')] * len(cols_inputs))
    args = ["%v: f32"] + [f"%r{i}: f32" for i in range(len(row_inputs))] + \
        [f"%c{i}: f32" for i in range(len(cols_inputs))] + ["%o: f32"]
    return f"""
    %{res} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = ["parallel", "parallel"]}}
        ins({', '.join(ins)} : {', '.join(types)}) outs(%e : {t((rows, cols), 'f32')}) {{
      ^bb0({', '.join(args)}):
        {body_ops}
    }} -> {t((rows, cols), 'f32')}"""


def log_softmax(name, rows, cols):
    body = f"""
    %ninf = arith.constant -3.40282347E+38 : f32
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : {t((rows, cols), 'f32')}
    %er = tensor.empty() : {t((rows,), 'f32')}""" + row_reduce(
        "mx", "x", "ninf", rows, cols,
        "%m = arith.maximumf %v, %acc : f32\n        linalg.yield %m : f32") + row_reduce(
        "se", "x", "zero", rows, cols,
        "%d = arith.subf %v, %p : f32\n        %x1 = math.exp %d : f32\n        %s = arith.addf %x1, %acc : f32\n        linalg.yield %s : f32",
        ins_extra="mx") + elementwise_rows(
        "r", "x", ["mx", "se"], rows, cols,
        "%d = arith.subf %v, %r0 : f32\n        %l = math.log %r1 : f32\n        %y = arith.subf %d, %l : f32\n        linalg.yield %y : f32") + f"""
    return %r : {t((rows, cols), 'f32')}
    """
    return fn(name, [("x", t((rows, cols), "f32"))], body, t((rows, cols), "f32"))


def layernorm(name, rows, cols, rms=False):
    inv = 1.0 / cols
    body = f"""
    %zero = arith.constant 0.0 : f32
    %inv = arith.constant {inv} : f32
    %eps = arith.constant 1.0e-5 : f32
    %e = tensor.empty() : {t((rows, cols), 'f32')}
    %er = tensor.empty() : {t((rows,), 'f32')}"""
    if rms:
        body += row_reduce("ss", "x", "zero", rows, cols,
                           "%q = arith.mulf %v, %v : f32\n        %s = arith.addf %q, %acc : f32\n        linalg.yield %s : f32")
        body += elementwise_rows(
            "r", "x", ["ss"], rows, cols,
            "%ms = arith.mulf %r0, %inv : f32\n        %me = arith.addf %ms, %eps : f32\n        %rs = math.rsqrt %me : f32\n        %n = arith.mulf %v, %rs : f32\n        %y = arith.mulf %n, %c0 : f32\n        linalg.yield %y : f32",
            cols_inputs=["g"])
        args = [("x", t((rows, cols), "f32")), ("g", t((cols,), "f32"))]
    else:
        body += row_reduce("sm", "x", "zero", rows, cols,
                           "%s = arith.addf %v, %acc : f32\n        linalg.yield %s : f32")
        body += row_reduce("sv", "x", "zero", rows, cols,
                           "%mu = arith.mulf %p, %inv : f32\n        %d = arith.subf %v, %mu : f32\n        %q = arith.mulf %d, %d : f32\n        %s = arith.addf %q, %acc : f32\n        linalg.yield %s : f32",
                           ins_extra="sm")
        body += elementwise_rows(
            "r", "x", ["sm", "sv"], rows, cols,
            "%mu = arith.mulf %r0, %inv : f32\n        %var = arith.mulf %r1, %inv : f32\n        %ve = arith.addf %var, %eps : f32\n        %rs = math.rsqrt %ve : f32\n        %d = arith.subf %v, %mu : f32\n        %n = arith.mulf %d, %rs : f32\n        %y = arith.mulf %n, %c0 : f32\n        %z = arith.addf %y, %c1 : f32\n        linalg.yield %z : f32",
            cols_inputs=["g", "b"])
        args = [("x", t((rows, cols), "f32")), ("g", t((cols,), "f32")), ("b", t((cols,), "f32"))]
    body += f"\n    return %r : {t((rows, cols), 'f32')}\n"
    return fn(name, args, body, t((rows, cols), "f32"))


def activation_chain(name, kind, n, dtype="f32"):
    ops = {
        "relu": "%y = arith.maximumf %v, %zero : {d}",
        "sigmoid": "%n0 = arith.negf %v : {d}\n        %x0 = math.exp %n0 : {d}\n        %a0 = arith.addf %x0, %one : {d}\n        %y = arith.divf %one, %a0 : {d}",
        "tanh": "%y = math.tanh %v : {d}",
        "gelu": "%c3 = arith.mulf %v, %v : {d}\n        %c4 = arith.mulf %c3, %v : {d}\n        %c5 = arith.mulf %c4, %k1 : {d}\n        %c6 = arith.addf %v, %c5 : {d}\n        %c7 = arith.mulf %c6, %k0 : {d}\n        %c8 = math.tanh %c7 : {d}\n        %c9 = arith.addf %c8, %one : {d}\n        %c10 = arith.mulf %v, %c9 : {d}\n        %y = arith.mulf %c10, %half : {d}",
    }
    first = ops[kind].format(d=dtype)
    # A chain: the activation, then a scale-and-shift consumer.
    m = "affine_map<(a, b) -> (a, b)>"
    ty = t(n, dtype)
    body = f"""
    %zero = arith.constant 0.0 : {dtype}
    %one = arith.constant 1.0 : {dtype}
    %half = arith.constant 0.5 : {dtype}
    %k0 = arith.constant 0.7978845608 : {dtype}
    %k1 = arith.constant 0.044715 : {dtype}
    %two = arith.constant 2.0 : {dtype}
    %e = tensor.empty() : {ty}
    %a = linalg.generic {{indexing_maps = [{m}, {m}], iterator_types = ["parallel", "parallel"]}} ins(%x : {ty}) outs(%e : {ty}) {{
      ^bb0(%v: {dtype}, %o: {dtype}):
        {first}
        linalg.yield %y : {dtype}
    }} -> {ty}
    %r = linalg.generic {{indexing_maps = [{m}, {m}], iterator_types = ["parallel", "parallel"]}} ins(%a : {ty}) outs(%e : {ty}) {{
      ^bb0(%v: {dtype}, %o: {dtype}):
        %s = arith.mulf %v, %two : {dtype}
        %y = arith.addf %s, %one : {dtype}
        linalg.yield %y : {dtype}
    }} -> {ty}
    return %r : {ty}
    """
    return fn(name, [("x", ty)], body, ty)


def problems(size):
    s = size == "small"
    P = {}
    P["matmul_square"] = matmul("matmul_square", *( (64, 64, 64) if s else (1024, 1024, 1024)))
    P["matmul_rect"] = matmul("matmul_rect", *((48, 80, 32) if s else (2048, 512, 1024)))
    P["matmul_irregular"] = matmul("matmul_irregular", *((37, 53, 29) if s else (8205, 5921, 2949)))
    P["matmul_transposed_b"] = matmul("matmul_transposed_b", *((64, 48, 32) if s else (1024, 1024, 1024)), tb=True)
    P["matmul_bf16"] = matmul("matmul_bf16", *((32, 64, 48) if s else (1024, 1024, 1024)), dtype="bf16")
    P["batch_matmul"] = batch_matmul("batch_matmul", *((4, 32, 48, 16) if s else (32, 256, 256, 128)))
    P["matvec"] = matvec("matvec", *((96, 80) if s else (4096, 4096)))
    P["conv1d_nwc"] = conv("conv1d_nwc", "conv_1d_nwc_wcf", (2, 34, 8) if s else (16, 1026, 64),
                           (3, 8, 16) if s else (3, 64, 128), (2, 32, 16) if s else (16, 1024, 128), 1, 1, 1)
    P["conv2d_nhwc"] = conv("conv2d_nhwc", "conv_2d_nhwc_hwcf", (1, 10, 10, 8) if s else (8, 58, 58, 64),
                            (3, 3, 8, 16) if s else (3, 3, 64, 64), (1, 8, 8, 16) if s else (8, 56, 56, 64), 1, 1, 2)
    P["conv2d_nchw_strided"] = conv("conv2d_nchw_strided", "conv_2d_nchw_fchw", (1, 4, 11, 11) if s else (8, 64, 113, 113),
                                    (8, 4, 3, 3) if s else (128, 64, 3, 3), (1, 8, 5, 5) if s else (8, 128, 56, 56), 2, 1, 2)
    P["conv2d_dilated"] = conv("conv2d_dilated", "conv_2d_nhwc_hwcf", (1, 12, 12, 4) if s else (4, 60, 60, 64),
                               (3, 3, 4, 8) if s else (3, 3, 64, 64), (1, 8, 8, 8) if s else (4, 56, 56, 64), 1, 2, 2)
    P["conv2d_depthwise"] = conv("conv2d_depthwise", "depthwise_conv_2d_nhwc_hwc", (1, 10, 10, 16) if s else (8, 114, 114, 128),
                                 (3, 3, 16) if s else (3, 3, 128), (1, 8, 8, 16) if s else (8, 112, 112, 128), 1, 1, 2)
    P["conv2d_pointwise"] = conv("conv2d_pointwise", "conv_2d_nhwc_hwcf", (1, 8, 8, 16) if s else (8, 56, 56, 256),
                                 (1, 1, 16, 32) if s else (1, 1, 256, 128), (1, 8, 8, 32) if s else (8, 56, 56, 128), 1, 1, 2)
    P["conv3d"] = conv("conv3d", "conv_3d_ndhwc_dhwcf", (1, 6, 6, 6, 4) if s else (2, 18, 34, 34, 32),
                       (3, 3, 3, 4, 8) if s else (3, 3, 3, 32, 64), (1, 4, 4, 4, 8) if s else (2, 16, 32, 32, 64), 1, 1, 3)
    P["maxpool"] = pool("maxpool", "max", (1, 16, 16, 8) if s else (16, 112, 112, 64), 2, (1, 8, 8, 8) if s else (16, 56, 56, 64), 2)
    P["avgpool"] = pool("avgpool", "avg", (1, 16, 16, 8) if s else (16, 112, 112, 64), 2, (1, 8, 8, 8) if s else (16, 56, 56, 64), 2)
    P["reduce_sum"] = reduce("reduce_sum", "sum", *((32, 96) if s else (4096, 4096)))
    P["reduce_mean"] = reduce("reduce_mean", "mean", *((32, 96) if s else (4096, 4096)))
    P["reduce_max"] = reduce("reduce_max", "max", *((32, 96) if s else (4096, 4096)))
    P["reduce_global_sum"] = global_sum("reduce_global_sum", 4096 if s else 1 << 24)
    P["argmax"] = argmax("argmax", *((32, 96) if s else (4096, 4096)))
    P["softmax"] = softmax("softmax", *((16, 128) if s else (4096, 4096)))
    P["softmax_f16"] = softmax("softmax_f16", *((16, 64) if s else (4096, 4096)), dtype="f16")
    P["log_softmax"] = log_softmax("log_softmax", *((16, 128) if s else (4096, 4096)))
    P["layernorm"] = layernorm("layernorm", *((16, 128) if s else (4096, 4096)))
    P["rmsnorm"] = layernorm("rmsnorm", *((16, 128) if s else (4096, 4096)), rms=True)
    for act in ("relu", "gelu", "sigmoid", "tanh"):
        P[f"{act}_chain"] = activation_chain(f"{act}_chain", act, (64, 96) if s else (4096, 4096))
    P["gelu_chain_bf16"] = activation_chain("gelu_chain_bf16", "gelu", (64, 96) if s else (4096, 4096), dtype="bf16")
    return P


def main():
    for size in ("small", "full"):
        folder = os.path.join(HERE, size)
        os.makedirs(folder, exist_ok=True)
        for name, text in problems(size).items():
            with open(os.path.join(folder, name + ".mlir"), "w") as f:
                f.write(f"// ke kernel suite ({size}): {name}. Generated by ../generate.py.\n")
                f.write(text)


if __name__ == "__main__":
    main()
