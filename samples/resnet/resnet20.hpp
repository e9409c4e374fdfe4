// samples/resnet/resnet20.hpp: the ResNet-20-style network of samples/resnet, as one
// function from an nn::Input to the class logits, so that `dlbench train --model resnet20`
// (tools/dlbench/train.cc) times exactly the network the sample trains; its PyTorch twin is
// tools/dlbench/torch_reference.py's resnet20().
//
//   in (H,W,C) -> Conv2D(16, 3x3, same) -> BN -> ReLU                        stem
//   -> 3 stages x 3 basic blocks, 16 / 32 / 64 filters:
//        y = BN(Conv3x3(ReLU(BN(Conv3x3(x)))));  out = ReLU(y + shortcut(x))
//        the first block of stages 2 and 3 has stride 2 (28 -> 14 -> 7) and a projection
//        shortcut BN(Conv1x1, stride 2) (He et al.'s option B); the others add x itself
//   -> GlobalAveragePooling2D -> Dense(classes) logits
// Every kernel He-normal (Keras' ResNet examples: kernel_initializer="he_normal"); the convs
// have no bias (use_bias = false, as torchvision's ResNets and Keras' ResNetV2): each feeds a
// BatchNormalization, which subtracts any per-channel bias again, so a bias's gradient is
// zero in training and it would only cost a bias_add_grad pass per conv and step (7 of
// ~118 ms on the Xeon of docs/benchmarks.md). The Dense head's bias is zeros.
// BatchNormalization with Keras' defaults (momentum 0.99, epsilon 1e-3). For (28,28,1) and
// 10 classes: 273,754 parameters, 1,568 of them the moving statistics.
#ifndef DLRT_SAMPLES_RESNET20_HPP_
#define DLRT_SAMPLES_RESNET20_HPP_

#include <dlrt/nn.hpp>

#include <cstdint>

namespace resnet {

namespace nn = dlrt::nn;

// Conv2D(filters, k x k, stride, same padding, no bias, no activation) with He-normal kernels.
inline nn::SymbolicTensor conv(const nn::SymbolicTensor& x, int64_t filters, int64_t k,
                               int64_t stride) {
  nn::Conv2DOptions o;
  o.strides = {stride, stride};
  o.padding = "same";
  o.kernel_initializer = nn::Initializer::he_normal();
  o.use_bias = false;  // the BatchNormalization after it has the bias (beta)
  return nn::Conv2D(filters, {k, k}, o)(x);
}

// BatchNormalization over the channels with Keras' epsilon 1e-3 and the given momentum.
inline nn::SymbolicTensor bn(const nn::SymbolicTensor& x, double momentum) {
  return nn::BatchNormalization(-1, momentum)(x);
}

inline nn::SymbolicTensor relu(const nn::SymbolicTensor& x) { return nn::ReLU()(x); }

// One basic block: x (H,W,Ci) -> (H/stride, W/stride, filters).
inline nn::SymbolicTensor residual_block(const nn::SymbolicTensor& x, int64_t filters,
                                         int64_t stride, double momentum) {
  nn::SymbolicTensor y = relu(bn(conv(x, filters, 3, stride), momentum));
  y = bn(conv(y, filters, 3, 1), momentum);
  const bool project = stride != 1 || x.shape().back() != filters;
  const nn::SymbolicTensor shortcut = project ? bn(conv(x, filters, 1, stride), momentum) : x;
  return relu(nn::Add()({y, shortcut}));
}

// The whole network from `in` (28,28,1) to class logits (10). `bn_momentum` is every
// BatchNormalization's (Keras' default 0.99; a short run needs less for its moving
// statistics to reach the data's: after k steps they hold 1 - momentum^k of it).
inline nn::SymbolicTensor resnet20(const nn::Input& in, int64_t classes,
                                   double bn_momentum = 0.99) {
  nn::SymbolicTensor x = relu(bn(conv(in, 16, 3, 1), bn_momentum));
  const int64_t filters[3] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage)
    for (int block = 0; block < 3; ++block)
      x = residual_block(x, filters[stage], stage > 0 && block == 0 ? 2 : 1, bn_momentum);
  x = nn::GlobalAveragePooling2D()(x);
  nn::DenseOptions head;  // logits: the loss takes their softmax (from_logits)
  head.kernel_initializer = nn::Initializer::he_normal();
  return nn::Dense(classes, head)(x);
}

}  // namespace resnet

#endif  // DLRT_SAMPLES_RESNET20_HPP_
