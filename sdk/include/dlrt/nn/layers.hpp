// dlrt/nn/layers.hpp: Keras' core layers in one include — the Layer interface (layer.hpp),
// Input (input.hpp), Conv2D (conv.hpp), Dense (dense.hpp), MaxPool2D and AvgPool2D
// (pooling.hpp), Flatten and Reshape (reshaping.hpp), Dropout (dropout.hpp), the activation
// layers ReLU, Sigmoid, Tanh, Softmax, Activation and LeakyReLU (activations.hpp), and the
// window geometry they share (window.hpp). Each of those headers stands alone; this one keeps
// a program that includes layers.hpp compiling as before. More layers have their own headers,
// which nn.hpp includes: merging.hpp (Add, Concatenate), batch_norm.hpp (BatchNormalization),
// global_pooling.hpp (GlobalAveragePooling2D), depthwise_conv.hpp (DepthwiseConv2D), ...
#ifndef DLRT_NN_LAYERS_HPP_
#define DLRT_NN_LAYERS_HPP_

#include "dlrt/nn/activations.hpp"
#include "dlrt/nn/conv.hpp"
#include "dlrt/nn/dense.hpp"
#include "dlrt/nn/dropout.hpp"
#include "dlrt/nn/input.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/pooling.hpp"
#include "dlrt/nn/reshaping.hpp"
#include "dlrt/nn/window.hpp"

#endif  // DLRT_NN_LAYERS_HPP_
