"""PyTorch's convolutions on the layer shapes of bench/conv_kernel.cpp
(kLayers there; the two lists are one table): forward, input gradient and
weight gradient each through aten.convolution / aten.convolution_backward
as autograd calls them (oneDNN on the CPU), fastest of 15 calls after 2
warm-ups, as the C++ side times lmc's kernels.

    PEER=1 THREADS=2 bash bench/conv_kernel.sh
"""
import argparse
import time

import torch

LAYERS = [
    ("resnet18-64 conv1", 4, 3, 64, 64, 7, 2, 3),
    ("resnet18-64 layer1", 4, 64, 64, 16, 3, 1, 1),
    ("resnet18-64 layer2", 4, 128, 128, 8, 3, 1, 1),
    ("resnet18-64 layer3", 4, 256, 256, 4, 3, 1, 1),
    ("resnet18-64 layer4", 4, 512, 512, 2, 3, 1, 1),
    ("resnet18-224 layer1", 8, 64, 64, 56, 3, 1, 1),
    ("resnet18-224 layer4", 8, 512, 512, 7, 3, 1, 1),
    ("vgg-32 conv2", 32, 64, 64, 32, 3, 1, 1),
    ("vgg-32 conv3", 32, 64, 128, 16, 3, 1, 1),
]


def fastest_ms(call):
    times = []
    for i in range(17):
        start = time.perf_counter()
        call()
        if i >= 2:
            times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    torch.set_num_threads(parser.parse_args().threads)
    aten = torch.ops.aten
    print(f"PyTorch {torch.__version__}")
    print("| layer | forward ms | input grad ms | weight grad ms | GFLOP/s |")
    print("|---|---|---|---|---|")
    with torch.no_grad():
        for name, n, c, f, size, k, s, p in LAYERS:
            x = torch.randn(n, c, size, size)
            w = torch.randn(f, c, k, k)
            y = aten.convolution(x, w, None, [s, s], [p, p], [1, 1], False,
                                 [0, 0], 1)
            dy = torch.randn_like(y)

            def backward(mask):
                return lambda: aten.convolution_backward(
                    dy, x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1,
                    mask)

            fwd = fastest_ms(lambda: aten.convolution(
                x, w, None, [s, s], [p, p], [1, 1], False, [0, 0], 1))
            dx = fastest_ms(backward([True, False, False]))
            dw = fastest_ms(backward([False, True, False]))
            flops = 2.0 * y.numel() * c * k * k
            print(f"| {name} | {fwd:.3f} | {dx:.3f} | {dw:.3f} "
                  f"| {3 * flops / ((fwd + dx + dw) * 1e6):.0f} |")


if __name__ == "__main__":
    main()
