// dlrt/nn.hpp: a Keras-style layer over dlrt — Sequential models of layers, initializers,
// optimizers, losses, metrics, fit/evaluate/predict with Keras' progress output, callbacks
// (History, CSVLogger, ModelCheckpoint) and safetensors checkpoints. Header-only, over the C
// API and dlrt.hpp; one header per concept under dlrt/nn/:
//   data.hpp          host arrays, seeds, the seeded epoch order
//   initializers.hpp  glorot_uniform, he_uniform, he_normal, zeros (init ops of the graph)
//   layers.hpp        Input, Conv2D, MaxPool2D, AvgPool2D, Flatten, Dense, Dropout, activations
//   batch_norm.hpp    BatchNormalization (moving statistics as non-trainable state)
//   optimizers.hpp    Adam, SGD (in-place fused updates)
//   losses.hpp        SparseCategoricalCrossentropy, MeanSquaredError
//   metrics.hpp       accuracy
//   progress.hpp      Keras' Progbar lines
//   callbacks.hpp     Callback, History, CSVLogger
//   session.hpp       (detail) the graph and executables behind a model
//   distribute.hpp    MirroredStrategy, MultiWorkerMirroredStrategy, StrategyScope
//   replicated.hpp    (detail) a model's replicas and its data-parallel step
//   model.hpp         Sequential, nn::DeviceScope
//   checkpoint.hpp    save_weights / load_weights, ModelCheckpoint
// samples/mnist_cnn shows it end to end.
#ifndef DLRT_NN_HPP_
#define DLRT_NN_HPP_

#include "dlrt/dlrt.hpp"
#include "dlrt/nn/batch_norm.hpp"
#include "dlrt/nn/callbacks.hpp"
#include "dlrt/nn/checkpoint.hpp"
#include "dlrt/nn/data.hpp"
#include "dlrt/nn/initializers.hpp"
#include "dlrt/nn/layers.hpp"
#include "dlrt/nn/losses.hpp"
#include "dlrt/nn/metrics.hpp"
#include "dlrt/nn/model.hpp"
#include "dlrt/nn/optimizers.hpp"
#include "dlrt/nn/progress.hpp"

#endif  // DLRT_NN_HPP_
