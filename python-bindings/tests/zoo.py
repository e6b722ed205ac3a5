"""The PyTorch modules ke's Python tests compile (test_models.py), shared
with benchmarks/gpu/torch_models.py, which compiles the same ones for a
CUDA GPU and checks them there. Only torch is imported here."""

import torch
from torch import nn


class Attention(nn.Module):
    """Single-head self-attention with an output projection."""

    def __init__(self, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)
        return self.out(weights @ v)


class Residual(nn.Module):
    """A ResNet basic block: two 3x3 conv + batch norm, ReLU, skip."""

    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class TwoOutputs(nn.Module):
    def forward(self, x, y):
        return x @ y, torch.tanh(x).sum(dim=1)


class ElementwiseChain(nn.Module):
    def forward(self, x):
        return torch.tanh(x) * torch.sigmoid(x) + torch.exp(-x * x)


def _batchnorm_with_statistics(module):
    """Non-trivial running statistics, so eval-mode batch norm matters."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return module


MODELS = {
    "mlp": lambda: (nn.Sequential(nn.Linear(16, 32), nn.ReLU(),
                                  nn.Linear(32, 8)), (torch.randn(4, 16),)),
    "conv_bn_relu": lambda: (
        _batchnorm_with_statistics(nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())),
        (torch.randn(1, 3, 8, 8),)),
    "attention": lambda: (Attention(), (torch.randn(2, 8, 32),)),
    "layernorm": lambda: (nn.LayerNorm(32), (torch.randn(4, 32),)),
    "softmax": lambda: (nn.Softmax(dim=-1), (torch.randn(4, 16),)),
    "residual": lambda: (_batchnorm_with_statistics(Residual()),
                         (torch.randn(1, 8, 6, 6),)),
    "linear": lambda: (nn.Linear(8, 4), (torch.randn(3, 8),)),
    "elementwise_chain": lambda: (ElementwiseChain(), (torch.randn(5, 7),)),
    "max_pool": lambda: (nn.MaxPool2d(2), (torch.randn(1, 2, 8, 8),)),
    "avg_pool": lambda: (nn.AvgPool2d(2), (torch.randn(1, 2, 8, 8),)),
    "two_outputs": lambda: (TwoOutputs(), (torch.randn(4, 6),
                                           torch.randn(6, 3))),
    "log_softmax": lambda: (nn.LogSoftmax(dim=1), (torch.randn(3, 10),)),
    # math.erf (exact) and math.fpowi (tanh form), which ke-expand-math
    # rewrites for LLVM's CPU lowering.
    "gelu": lambda: (nn.Sequential(nn.Linear(8, 16), nn.GELU()),
                     (torch.randn(4, 8),)),
    "gelu_tanh": lambda: (nn.GELU(approximate="tanh"), (torch.randn(4, 24),)),
    # A strided ConvTranspose: torch-mlir's strided zero stuffing
    # (ke-inserts-to-gathers) and the weight flip (a gather).
    "conv_transpose": lambda: (nn.ConvTranspose2d(2, 3, 3, stride=2,
                                                  padding=1),
                               (torch.randn(1, 2, 5, 5),)),
    # Strided ConvTransposes split into phase convolutions
    # (ke-conv-transpose-phases): phases of different input shifts
    # (kernel 4), 3-D with output padding, 1-D stride 3, a filter smaller
    # than the stride (phases no tap meets: bias only), kernel = stride (the
    # phases read the input itself), mixed strides.
    "conv_transpose_k4": lambda: (nn.ConvTranspose2d(2, 3, 4, stride=2,
                                                     padding=1,
                                                     output_padding=1),
                                  (torch.randn(2, 2, 5, 6),)),
    "conv_transpose_3d": lambda: (nn.ConvTranspose3d(2, 3, 3, stride=2,
                                                     padding=1,
                                                     output_padding=1),
                                  (torch.randn(1, 2, 3, 4, 5),)),
    "conv_transpose_1d": lambda: (nn.ConvTranspose1d(2, 3, 5, stride=3,
                                                     padding=2),
                                  (torch.randn(2, 2, 7),)),
    "conv_transpose_small_filter": lambda: (
        nn.ConvTranspose2d(2, 3, (1, 2), stride=(3, 2)),
        (torch.randn(1, 2, 4, 5),)),
    "conv_transpose_upsample": lambda: (nn.ConvTranspose2d(3, 2, 2,
                                                           stride=2),
                                        (torch.randn(2, 3, 4, 5),)),
    # Dilated: with stride 2 and dilation 2 the even phase meets no tap
    # and the odd one all three; dilation 3 keeps a dilation per phase.
    "conv_transpose_dilated": lambda: (
        nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dilation=2),
        (torch.randn(1, 2, 4, 5),)),
    "conv_transpose_dilated_1d": lambda: (
        nn.ConvTranspose1d(2, 3, 3, stride=2, padding=2, dilation=3,
                           output_padding=1),
        (torch.randn(2, 2, 9),)),
    "conv_transpose_mixed": lambda: (nn.ConvTranspose2d(3, 2, (3, 2),
                                                        stride=(2, 1)),
                                     (torch.randn(1, 3, 4, 4),)),
}
