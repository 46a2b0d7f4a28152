// Times the runtime's convolution kernels alone (runtime/kernels/
// convolution.cpp: lmc_rt_conv_f32 and its two adjoints) on the layer
// shapes of torchvision's ResNet-18 and a VGG-style CNN, fastest of 15 calls
// after 2 warm-ups (the least disturbed by a shared host), with the runtime's thread pool at $THREADS (bench/
// conv_kernel.sh). bench/conv_torch.py times PyTorch's on the same shapes.
#include "lmc/runtime/kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

struct Layer {
  const char *name;
  int64_t batch, channels, filters, size, kernel, stride, pad;
};

const Layer kLayers[] = {
    {"resnet18-64 conv1", 4, 3, 64, 64, 7, 2, 3},
    {"resnet18-64 layer1", 4, 64, 64, 16, 3, 1, 1},
    {"resnet18-64 layer2", 4, 128, 128, 8, 3, 1, 1},
    {"resnet18-64 layer3", 4, 256, 256, 4, 3, 1, 1},
    {"resnet18-64 layer4", 4, 512, 512, 2, 3, 1, 1},
    {"resnet18-224 layer1", 8, 64, 64, 56, 3, 1, 1},
    {"resnet18-224 layer4", 8, 512, 512, 7, 3, 1, 1},
    {"vgg-32 conv2", 32, 64, 64, 32, 3, 1, 1},
    {"vgg-32 conv3", 32, 64, 128, 16, 3, 1, 1},
};

double fastestMs(void (*call)(const float *, const float *, float *,
                             const lmc_rt_conv_geometry *),
                const float *a, const float *b, float *out,
                const lmc_rt_conv_geometry &g) {
  std::vector<double> ms;
  for (int i = 0; i < 17; ++i) {
    auto start = std::chrono::steady_clock::now();
    call(a, b, out, &g);
    auto end = std::chrono::steady_clock::now();
    if (i >= 2)
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  return *std::min_element(ms.begin(), ms.end());
}

} // namespace

int main() {
  const char *threads = std::getenv("THREADS");
  lmc_rt_set_threads(threads ? std::atoi(threads) : 1);
  std::printf("| layer | N C F HW k s | forward ms | input grad ms | weight grad ms | GFLOP/s |\n|---|---|---|---|---|---|\n");
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Layer &l : kLayers) {
    lmc_rt_conv_geometry g{};
    g.batch = l.batch;
    g.channels = l.channels;
    g.filters = l.filters;
    g.groups = 1;
    const int64_t out = (l.size + 2 * l.pad - l.kernel) / l.stride + 1;
    for (int d = 0; d < 3; ++d) {
      const bool used = d > 0;
      g.input[d] = used ? l.size : 1;
      g.kernel[d] = used ? l.kernel : 1;
      g.output[d] = used ? out : 1;
      g.strides[d] = used ? l.stride : 1;
      g.dilations[d] = 1;
      g.pad_low[d] = used ? l.pad : 0;
    }
    std::vector<float> x(size_t(l.batch * l.channels * l.size * l.size)),
        w(size_t(l.filters * l.channels * l.kernel * l.kernel)),
        y(size_t(l.batch * l.filters * out * out));
    for (auto *v : {&x, &w, &y})
      for (float &e : *v)
        e = dist(rng);
    std::vector<float> dx(x.size()), dw(w.size()), fy(y.size());
    double f = fastestMs(lmc_rt_conv_f32, x.data(), w.data(), fy.data(), g);
    double i = fastestMs(lmc_rt_conv_input_grad_f32, y.data(), w.data(), dx.data(), g);
    double wg = fastestMs(lmc_rt_conv_weight_grad_f32, x.data(), y.data(), dw.data(), g);
    double flops = 2.0 * double(y.size()) * double(l.channels * l.kernel * l.kernel);
    std::printf("| %s | %lld %lld %lld %lld %lld %lld | %.3f | %.3f | %.3f | %.0f |\n",
                l.name, (long long)l.batch, (long long)l.channels,
                (long long)l.filters, (long long)l.size, (long long)l.kernel,
                (long long)l.stride, f, i, wg, 3 * flops / ((f + i + wg) * 1e6));
  }
}
