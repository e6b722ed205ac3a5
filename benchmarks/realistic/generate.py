#!/usr/bin/env python3
"""Writes the realistic problem set: benchmarks/realistic/{small,full}/*.mlir.

The kernel suite (../suite) has friendly shapes: powers of two, NHWC
convolutions. This set has the shapes that models bring (issue #16): layers
of BERT-base, GPT-2, ViT-B/16, ResNet-50, MobileNet and Llama-like models,
with odd row lengths (197, 1000, 4097, 50257, rows of 7), NCHW and strided
convolutions as torch-mlir emits them, transposed weights (nn.Linear), a
16-bit GEMM and a decode-time matrix-vector product.

Each problem is one function of linalg on tensors, in two sizes: `full`, the
layer's shape at a typical batch, for benchmarks (benchmarks/gpu/run.py
--dir benchmarks/realistic/full), and `small`, the same kind and layout with
the odd extents kept where they are cheap, for tests and this CPU
(benchmarks/cpu/no_cliffs.py). Each file's header says where the shape
comes from and, in `// torch:` lines, the PyTorch computation it is
measured against: every line but the last is a statement run once outside
the timing (layout changes), the last an expression giving the timed
callable, with the inputs in `t` (ke's argument order and layouts), `torch`
and `F` (torch.nn.functional) in scope.

Run it after editing the list; the files are checked in so that tests do
not depend on Python.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "suite"))
import generate as suite  # noqa: E402

MM_TB = "lambda: torch.mm(t[0], t[1].t())"
SOFTMAX = "lambda: torch.softmax(t[0], 1)"


def problems(size):
    """name -> (origin, torch lines, text)."""
    s = size == "small"
    P = {}

    def add(name, origin, torch_lines, text):
        P[name] = (origin, torch_lines, text)

    def shape(small, full):
        return small if s else full

    # --- GEMMs (nn.Linear: weights stored N x K) -----------------------------
    add("bert_qkv", "BERT-base QKV projection, batch 8 x 384 tokens",
        [MM_TB], suite.matmul("bert_qkv", *shape((40, 72, 48), (3072, 2304, 768)), tb=True))
    add("gpt2_lm_head", "GPT-2 LM head, 1024 tokens x 50257-word vocabulary",
        [MM_TB], suite.matmul("gpt2_lm_head", *shape((4, 503, 32), (1024, 50257, 768)), tb=True))
    add("vit_mlp_up", "ViT-B/16 MLP up-projection, batch 32 x 197 tokens",
        [MM_TB], suite.matmul("vit_mlp_up", *shape((25, 48, 24), (6304, 3072, 768)), tb=True))
    add("llama_mlp_bf16", "Llama-2-7B MLP gate projection in bf16, 2048 tokens",
        ["lambda: torch.mm(t[0], t[1].t(), out_dtype=torch.float32)"],
        suite.matmul("llama_mlp_bf16", *shape((16, 344, 64), (2048, 11008, 4096)),
                     dtype="bf16", tb=True))
    add("bert_attn_scores", "BERT-base attention scores, 8 x 12 heads, 384 tokens",
        ["lambda: torch.bmm(t[0], t[1])"],
        suite.batch_matmul("bert_attn_scores", *shape((3, 24, 24, 16), (96, 384, 384, 64))))
    add("llama_decode_matvec", "Llama-2-7B MLP at decode time (one token)",
        ["lambda: torch.mv(t[0], t[1])"],
        suite.matvec("llama_decode_matvec", *shape((344, 128), (11008, 4096))))

    # --- convolutions and pooling as torch-mlir emits them (NCHW) ------------
    def conv_nchw(name, origin, n, c, hw, f, k, stride):
        out = (hw - k) // stride + 1
        inp, flt, res = (n, c, hw, hw), (f, c, k, k), (n, f, out, out)
        add(name, origin, [f"lambda: F.conv2d(t[0], t[1], stride={stride})"],
            suite.conv(name, "conv_2d_nchw_fchw", inp, flt, res, stride, 1, 2))

    conv_nchw("resnet_stem", "ResNet-50 stem, 7x7 stride 2, batch 32 (input padded)",
              *shape((1, 3, 21, 8, 7, 2), (32, 3, 229, 64, 7, 2)))
    conv_nchw("resnet_conv3x3", "ResNet-50 stage 1 3x3 convolution, batch 32 (padded)",
              *shape((1, 8, 10, 8, 3, 1), (32, 64, 58, 64, 3, 1)))
    conv_nchw("resnet_conv1x1", "ResNet-50 stage 1 1x1 reduction 256 -> 64, batch 32",
              *shape((1, 32, 7, 8, 1, 1), (32, 256, 56, 64, 1, 1)))
    conv_nchw("resnet_conv3x3_s2", "ResNet-50 stage 3 strided 3x3, batch 32 (padded)",
              *shape((1, 8, 9, 8, 3, 2), (32, 128, 57, 128, 3, 2)))
    conv_nchw("vit_patch_embed", "ViT-B/16 patch embedding, 16x16 stride 16, batch 32",
              *shape((1, 3, 32, 16, 16, 16), (32, 3, 224, 768, 16, 16)))
    def conv_ncw(name, origin, n, c, w, f, k, stride):
        out = (w - k) // stride + 1
        inp, flt, res = (n, c, w), (f, c, k), (n, f, out)
        add(name, origin, [f"lambda: F.conv1d(t[0], t[1], stride={stride})"],
            suite.conv(name, "conv_1d_ncw_fcw", inp, flt, res, stride, 1, 1))

    conv_ncw("whisper_conv1", "Whisper-base encoder conv1, 80 mel bins -> 512, 3000 frames, batch 8 (padded)",
             *shape((1, 80, 23, 16, 3, 1), (8, 80, 3002, 512, 3, 1)))
    conv_ncw("whisper_conv2", "Whisper-base encoder conv2, 512 -> 512 stride 2, batch 8 (padded)",
             *shape((1, 16, 23, 16, 3, 2), (8, 512, 3001, 512, 3, 2)))
    add("resnet_maxpool", "ResNet-50 stem max pooling 3x3 stride 2, batch 32 (padded)",
        ["lambda: F.max_pool2d(t[0], 3, 2)"],
        suite.pool("resnet_maxpool", "max", *shape(((1, 8, 9, 9), 3, (1, 8, 4, 4), 2),
                                                   ((32, 64, 113, 113), 3, (32, 64, 56, 56), 2)),
                   layout="nchw"))
    add("mobilenet_depthwise", "MobileNetV2 first depthwise 3x3, 32 channels, batch 32 (NHWC)",
        ["x = t[0].permute(0, 3, 1, 2)",
         "w = t[1].permute(2, 0, 1).unsqueeze(1).contiguous(memory_format=torch.channels_last)",
         "lambda: F.conv2d(x, w, groups=x.shape[1])"],
        suite.conv("mobilenet_depthwise", "depthwise_conv_2d_nhwc_hwc",
                   *shape(((1, 10, 10, 8), (3, 3, 8), (1, 8, 8, 8)),
                          ((32, 114, 114, 32), (3, 3, 32), (32, 112, 112, 32))), 1, 1, 2))
    add("resnet_global_avgpool", "ResNet-50 global average pooling, batch 32 x 2048 channels of 7x7",
        ["lambda: t[0].mean(1)"],
        suite.reduce("resnet_global_avgpool", "mean", *shape((64, 49), (65536, 49))))

    # --- row kernels on odd row lengths ---------------------------------------
    add("bert_softmax", "BERT-base attention softmax, 8 x 12 heads x 384 rows of 384",
        [SOFTMAX], suite.softmax("bert_softmax", *shape((16, 384), (36864, 384))))
    add("vit_softmax", "ViT-B/16 attention softmax, 32 x 12 heads x 197 rows of 197",
        [SOFTMAX], suite.softmax("vit_softmax", *shape((24, 197), (75648, 197))))
    add("imagenet_softmax", "ImageNet class softmax, 16384 rows of 1000",
        [SOFTMAX], suite.softmax("imagenet_softmax", *shape((8, 1000), (16384, 1000))))
    add("imagenet_softmax_f16", "the same in f16",
        [SOFTMAX], suite.softmax("imagenet_softmax_f16", *shape((8, 1000), (16384, 1000)),
                                 dtype="f16"))
    add("llama_softmax_vocab", "Llama-2 vocabulary softmax, 512 rows of 32000",
        [SOFTMAX], suite.softmax("llama_softmax_vocab", *shape((2, 32000), (512, 32000))))
    add("short_rows_softmax", "rows shorter than a warp: 262144 rows of 7",
        [SOFTMAX], suite.softmax("short_rows_softmax", *shape((64, 7), (262144, 7))))
    add("gpt2_log_softmax", "GPT-2 log-probabilities, 1024 rows of 50257",
        ["lambda: torch.log_softmax(t[0], 1)"],
        suite.log_softmax("gpt2_log_softmax", *shape((4, 50257), (1024, 50257))))
    add("gpt2_argmax", "GPT-2 greedy decoding, 1024 rows of 50257",
        ["lambda: t[0].argmax(1)"],
        suite.argmax("gpt2_argmax", *shape((4, 50257), (1024, 50257))))
    layernorm = "lambda: F.layer_norm(t[0], (t[0].shape[1],), t[1], t[2], 1e-5)"
    add("bert_layernorm", "BERT-base layer norm, 8192 tokens of 768",
        [layernorm], suite.layernorm("bert_layernorm", *shape((16, 768), (8192, 768))))
    add("odd_layernorm", "layer norm over rows of 4097 (issue #16's odd length)",
        [layernorm], suite.layernorm("odd_layernorm", *shape((8, 4097), (8192, 4097))))
    add("llama_rmsnorm", "Llama-2-13B RMS norm, 2048 tokens of 5120",
        ["lambda: F.rms_norm(t[0], (t[0].shape[1],), t[1], 1e-5)"],
        suite.layernorm("llama_rmsnorm", *shape((4, 5120), (2048, 5120)), rms=True))

    # --- elementwise ------------------------------------------------------------
    add("vit_gelu", "ViT-B/16 MLP activation (tanh GELU, then x * 2 + 1), 6304 x 3072",
        ['lambda: F.gelu(t[0], approximate="tanh").mul_(2).add_(1)'],
        suite.activation_chain("vit_gelu", "gelu", shape((25, 77), (6304, 3072))))
    return P


def main():
    for size in ("small", "full"):
        folder = os.path.join(HERE, size)
        os.makedirs(folder, exist_ok=True)
        for name, (origin, torch_lines, text) in problems(size).items():
            with open(os.path.join(folder, name + ".mlir"), "w") as f:
                f.write(f"// ke realistic set ({size}): {name}. Generated by ../generate.py.\n")
                f.write(f"// from: {origin}\n")
                for line in torch_lines:
                    f.write(f"// torch: {line}\n")
                f.write(text)


if __name__ == "__main__":
    main()
