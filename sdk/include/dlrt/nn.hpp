// dlrt/nn.hpp: a Keras-style layer over dlrt — Sequential and functional models of layers,
// initializers, regularizers,
// optimizers, losses, metrics, fit/evaluate/predict with Keras' progress output, callbacks
// (History, CSVLogger, ModelCheckpoint) and safetensors checkpoints. The headers declare it (and
// keep small inline helpers); libdlrt_nn (CMake target dlrt::nn) implements it, over the C API
// and dlrt.hpp. One header per concept under dlrt/nn/:
//   data.hpp          host arrays, seeds, the seeded epoch order
//   initializers.hpp  glorot_uniform/normal, he_uniform/normal, zeros, ones, constant
//   regularizers.hpp  L2 weight penalties
//   symbolic.hpp      symbolic tensors and the nodes of a functional graph
//   layers.hpp        the core layers in one include; each of its headers stands alone:
//     layer.hpp         Layer, the interface every layer implements, and CallContext
//     input.hpp         Input
//     conv.hpp          Conv2D
//     dense.hpp         Dense
//     pooling.hpp       MaxPool2D, AvgPool2D
//     reshaping.hpp     Flatten, Reshape
//     dropout.hpp       Dropout
//     window.hpp        Size2 and the window geometry of Conv2D and the poolings
//     activations.hpp   ReLU, Sigmoid, Tanh, Softmax, Activation (by name), LeakyReLU
//   merging.hpp       Add, Concatenate
//   batch_norm.hpp    BatchNormalization (moving statistics as non-trainable state)
//   depthwise_conv.hpp  DepthwiseConv2D (a grouped conv2d with groups = channels)
//   conv_transpose.hpp  Conv2DTranspose (Keras' transposed convolution)
//   embedding.hpp     Embedding (integer ids -> trainable vectors; a gather op)
//   recurrent.hpp     LSTM (op lstm_cell per step), GRU (reset_after; ordinary ops)
//   optimizers.hpp    Adam, SGD (in-place fused updates)
//   losses.hpp        SparseCategoricalCrossentropy, MeanSquaredError
//   metrics.hpp       accuracy
//   progress.hpp      Keras' Progbar lines
//   callbacks.hpp     Callback, History, CSVLogger
//   early_stopping.hpp EarlyStopping, LearningRateScheduler
//   distribute.hpp    MirroredStrategy, MultiWorkerMirroredStrategy, StrategyScope
//   model.hpp         Model (functional), Sequential, nn::DeviceScope
//   train_step.hpp    TrainStep: custom training steps (GradientTape-style)
//   tape.hpp          Tape: what a custom step's function builds with
//   plan.hpp          (detail, not included here) a compiled model's plan: Model::plan()
//   session.hpp       (detail, not included here) the graph and executables behind a model
//   run_plan.hpp      (detail, not included here) a plan's layer calls built into a graph
//   runner.hpp        (detail, not included here) an executable with its feed and fetch tensors
//   checkpoint.hpp    save_weights / load_weights, ModelCheckpoint
//   image_grid.hpp    save_image_grid: a batch of images as one PNG (libpng in libdlrt)
// samples/mnist_cnn shows it end to end.
#ifndef DLRT_NN_HPP_
#define DLRT_NN_HPP_

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/activations.hpp"
#include "dlrt/nn/attention.hpp"
#include "dlrt/nn/batch_norm.hpp"
#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/checkpoint.hpp"
#include "dlrt/nn/conv.hpp"
#include "dlrt/nn/conv_transpose.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/dense.hpp"
#include "dlrt/nn/depthwise_conv.hpp"
#include "dlrt/nn/distribute.hpp"
#include "dlrt/nn/dropout.hpp"
#include "dlrt/nn/early_stopping.hpp"
#include "dlrt/nn/embedding.hpp"
#include "dlrt/nn/global_pooling.hpp"
#include "dlrt/nn/image_grid.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/input.hpp"
#include "dlrt/nn/layer.hpp"
#include "dlrt/nn/layer_norm.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/merging.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/mixed_precision.hpp"
#include "dlrt/nn/model.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/padding.hpp"
#include "dlrt/nn/pooling.hpp"
#include "dlrt/nn/progress.hpp"
#include "dlrt/nn/recurrent.hpp"
#include "dlrt/nn/regularizers.hpp"
#include "dlrt/nn/resampling.hpp"
#include "dlrt/nn/reshaping.hpp"
#include "dlrt/nn/symbolic.hpp"
#include "dlrt/nn/tape.hpp"
#include "dlrt/nn/text_data.hpp"
#include "dlrt/nn/train_step.hpp"
#include "dlrt/nn/transformer.hpp"
#include "dlrt/nn/window.hpp"

#endif  // DLRT_NN_HPP_
