// keras_layers.cc: nn's layers and symbolic tensors for dlrt.keras (python/dlrt/keras/).
//
// Each nn layer is bound with one constructor taking every setting explicitly, in Keras'
// order; the Python classes of dlrt/keras/layers.py give them Keras' signatures (defaults,
// kernel_size as an int or a pair, activation=None, input_shape=, name=) and call these.
// Layers are held by std::shared_ptr: a model holds the very object Python holds, so
// layer.name and layer.trainable are the model's (nn::LayerRef's shared constructor).
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlrt/nn.hpp>

#include "bindings.hpp"

namespace dlrt::python {

namespace {

namespace nn = dlrt::nn;
using nn::Size2;

nn::Initializer init_named(const std::string& name) { return nn::Initializer::named(name); }

nn::Regularizer l2_or_none(double l2) {
  return l2 > 0.0 ? nn::Regularizer::l2(l2) : nn::Regularizer::none();
}

nb::object symbolic_shape(const nn::SymbolicTensor& t) {
  nb::list dims;
  dims.append(nb::none());  // the batch
  for (int64_t d : t.shape()) dims.append(d);
  return nb::tuple(dims);
}

}  // namespace

void bind_keras_layers(nb::module_& m) {
  nb::class_<nn::SymbolicTensor>(m, "KerasTensor",
                                 "A symbolic tensor: an Input or a layer's output in a functional "
                                 "model (no values; the batch dim is None).")
      .def_prop_ro("shape", &symbolic_shape)
      // The node that made it (Keras' _keras_history), for calling a functional model on
      // eager tensors (keras/_eager.py): which call, which output, the layer (None for an
      // Input) and the tensors it was called on.
      .def_prop_ro("node_key",
                   [](const nn::SymbolicTensor& t) { return reinterpret_cast<uintptr_t>(t.node().get()); })
      .def_prop_ro("index", &nn::SymbolicTensor::index)
      .def_prop_ro("layer", [](const nn::SymbolicTensor& t) { return t.node()->layer; })
      .def_prop_ro("inputs", [](const nn::SymbolicTensor& t) { return t.node()->inputs; })
      .def("__repr__", [](const nn::SymbolicTensor& t) {
        return "<KerasTensor shape=" + nb::cast<std::string>(nb::repr(symbolic_shape(t))) + ">";
      });

  nb::class_<nn::Layer>(m, "Layer", "nn's layer base (dlrt.keras.layers wraps each kind).")
      .def_prop_rw("name", &nn::Layer::display_name, &nn::Layer::set_name)
      .def_prop_rw("trainable", &nn::Layer::trainable, &nn::Layer::set_trainable)
      .def_prop_ro("type", &nn::Layer::type)
      .def_prop_rw("dtype_policy", &nn::Layer::dtype_policy, &nn::Layer::set_dtype_policy)
      .def("output_shape_for", &nn::Layer::output_shape, nb::arg("input_shape"))
      // The node records this very object (nn::Layer::call_shared), so the functional
      // model's layers are the Python objects users hold.
      .def(
          "__call__",
          [](std::shared_ptr<nn::Layer> l, const nn::SymbolicTensor& x) {
            return nn::Layer::call_shared(l, {x});
          },
          nb::arg("inputs"))
      .def(
          "__call__",
          [](std::shared_ptr<nn::Layer> l, const std::vector<nn::SymbolicTensor>& xs) {
            return nn::Layer::call_shared(l, xs);
          },
          nb::arg("inputs"));

  m.def(
      "Input",
      [](const nn::Shape& shape) {
        nn::Input in(shape);
        return in.tensor();
      },
      nb::arg("shape"), "keras.Input: the symbolic tensor a functional model starts from.");

  nb::class_<nn::Input, nn::Layer>(m, "InputLayer")
      .def(nb::init<nn::Shape>(), nb::arg("shape"))
      .def_prop_ro("shape", &nn::Input::shape);

  nb::class_<nn::Dense, nn::Layer>(m, "Dense")
      .def(
          "__init__",
          [](nn::Dense* self, int64_t units, const std::string& activation,
             const std::string& kernel_initializer, const std::string& bias_initializer,
             double kernel_l2) {
            nn::DenseOptions o;
            o.activation = activation;
            o.kernel_initializer = init_named(kernel_initializer);
            o.bias_initializer = init_named(bias_initializer);
            o.kernel_regularizer = l2_or_none(kernel_l2);
            new (self) nn::Dense(units, o);
          },
          nb::arg("units"), nb::arg("activation"), nb::arg("kernel_initializer"),
          nb::arg("bias_initializer"), nb::arg("kernel_l2"));

  nb::class_<nn::Conv2D, nn::Layer>(m, "Conv2D")
      .def(
          "__init__",
          [](nn::Conv2D* self, int64_t filters, Size2 kernel, Size2 strides,
             const std::string& padding, const std::string& activation, bool use_bias,
             const std::string& kernel_initializer, const std::string& bias_initializer,
             double kernel_l2, Size2 dilation_rate, int64_t groups) {
            nn::Conv2DOptions o;
            o.strides = strides;
            o.padding = padding;
            o.activation = activation;
            o.use_bias = use_bias;
            o.kernel_initializer = init_named(kernel_initializer);
            o.bias_initializer = init_named(bias_initializer);
            o.kernel_regularizer = l2_or_none(kernel_l2);
            o.dilation_rate = dilation_rate;
            o.groups = groups;
            new (self) nn::Conv2D(filters, kernel, o);
          },
          nb::arg("filters"), nb::arg("kernel_size"), nb::arg("strides"), nb::arg("padding"),
          nb::arg("activation"), nb::arg("use_bias"), nb::arg("kernel_initializer"),
          nb::arg("bias_initializer"), nb::arg("kernel_l2"), nb::arg("dilation_rate"),
          nb::arg("groups"));

  nb::class_<nn::Conv2DTranspose, nn::Layer>(m, "Conv2DTranspose")
      .def(
          "__init__",
          [](nn::Conv2DTranspose* self, int64_t filters, Size2 kernel, Size2 strides,
             const std::string& padding, std::optional<Size2> output_padding,
             Size2 dilation_rate, const std::string& activation, bool use_bias,
             const std::string& kernel_initializer, const std::string& bias_initializer,
             double kernel_l2) {
            nn::Conv2DTransposeOptions o;
            o.strides = strides;
            o.padding = padding;
            o.output_padding = output_padding;
            o.dilation_rate = dilation_rate;
            o.activation = activation;
            o.use_bias = use_bias;
            o.kernel_initializer = init_named(kernel_initializer);
            o.bias_initializer = init_named(bias_initializer);
            o.kernel_regularizer = l2_or_none(kernel_l2);
            new (self) nn::Conv2DTranspose(filters, kernel, o);
          },
          nb::arg("filters"), nb::arg("kernel_size"), nb::arg("strides"), nb::arg("padding"),
          nb::arg("output_padding").none(), nb::arg("dilation_rate"), nb::arg("activation"),
          nb::arg("use_bias"), nb::arg("kernel_initializer"), nb::arg("bias_initializer"),
          nb::arg("kernel_l2"));

  nb::class_<nn::DepthwiseConv2D, nn::Layer>(m, "DepthwiseConv2D")
      .def(
          "__init__",
          [](nn::DepthwiseConv2D* self, Size2 kernel, Size2 strides, const std::string& padding,
             int64_t depth_multiplier, Size2 dilation_rate, const std::string& activation,
             bool use_bias, const std::string& depthwise_initializer,
             const std::string& bias_initializer, double depthwise_l2) {
            nn::DepthwiseConv2DOptions o;
            o.strides = strides;
            o.padding = padding;
            o.depth_multiplier = depth_multiplier;
            o.dilation_rate = dilation_rate;
            o.activation = activation;
            o.use_bias = use_bias;
            o.depthwise_initializer = init_named(depthwise_initializer);
            o.bias_initializer = init_named(bias_initializer);
            o.depthwise_regularizer = l2_or_none(depthwise_l2);
            new (self) nn::DepthwiseConv2D(kernel, o);
          },
          nb::arg("kernel_size"), nb::arg("strides"), nb::arg("padding"),
          nb::arg("depth_multiplier"), nb::arg("dilation_rate"), nb::arg("activation"),
          nb::arg("use_bias"), nb::arg("depthwise_initializer"), nb::arg("bias_initializer"),
          nb::arg("depthwise_l2"));

  nb::class_<nn::MaxPool2D, nn::Layer>(m, "MaxPooling2D")
      .def(nb::init<Size2, Size2, const std::string&>(), nb::arg("pool_size"), nb::arg("strides"),
           nb::arg("padding"));
  nb::class_<nn::AvgPool2D, nn::Layer>(m, "AveragePooling2D")
      .def(nb::init<Size2, Size2, const std::string&>(), nb::arg("pool_size"), nb::arg("strides"),
           nb::arg("padding"));
  nb::class_<nn::GlobalAveragePooling2D, nn::Layer>(m, "GlobalAveragePooling2D")
      .def(nb::init<bool, const std::string&>(), nb::arg("keepdims"), nb::arg("data_format"));
  nb::class_<nn::GlobalMaxPooling2D, nn::Layer>(m, "GlobalMaxPooling2D")
      .def(nb::init<bool, const std::string&>(), nb::arg("keepdims"), nb::arg("data_format"));
  nb::class_<nn::Flatten, nn::Layer>(m, "Flatten").def(nb::init<>());
  nb::class_<nn::Reshape, nn::Layer>(m, "Reshape")
      .def(nb::init<nn::Shape>(), nb::arg("target_shape"));
  nb::class_<nn::Dropout, nn::Layer>(m, "Dropout").def(nb::init<double>(), nb::arg("rate"));
  nb::class_<nn::BatchNormalization, nn::Layer>(m, "BatchNormalization")
      .def(nb::init<int64_t, double, double, bool, bool>(), nb::arg("axis"), nb::arg("momentum"),
           nb::arg("epsilon"), nb::arg("center"), nb::arg("scale"));
  nb::class_<nn::LayerNormalization, nn::Layer>(m, "LayerNormalization")
      .def(nb::init<int64_t, double, bool, bool>(), nb::arg("axis"), nb::arg("epsilon"),
           nb::arg("center"), nb::arg("scale"));
  nb::class_<nn::Add, nn::Layer>(m, "Add").def(nb::init<>());
  nb::class_<nn::Concatenate, nn::Layer>(m, "Concatenate")
      .def(nb::init<int64_t>(), nb::arg("axis"));
  nb::class_<nn::Embedding, nn::Layer>(m, "Embedding")
      .def(
          "__init__",
          [](nn::Embedding* self, int64_t input_dim, int64_t output_dim,
             const std::string& embeddings_initializer) {
            nn::EmbeddingOptions o;
            if (embeddings_initializer != "uniform")
              o.embeddings_initializer = init_named(embeddings_initializer);
            new (self) nn::Embedding(input_dim, output_dim, o);
          },
          nb::arg("input_dim"), nb::arg("output_dim"), nb::arg("embeddings_initializer"));
  nb::class_<nn::MultiHeadAttention, nn::Layer>(m, "MultiHeadAttention")
      .def(
          "__init__",
          [](nn::MultiHeadAttention* self, int64_t num_heads, int64_t key_dim, int64_t value_dim,
             double dropout, bool use_bias, bool use_causal_mask) {
            nn::MultiHeadAttentionOptions o;
            o.value_dim = value_dim;
            o.dropout = dropout;
            o.use_bias = use_bias;
            o.use_causal_mask = use_causal_mask;
            new (self) nn::MultiHeadAttention(num_heads, key_dim, o);
          },
          nb::arg("num_heads"), nb::arg("key_dim"), nb::arg("value_dim"), nb::arg("dropout"),
          nb::arg("use_bias"), nb::arg("use_causal_mask"));
  nb::class_<nn::LSTM, nn::Layer>(m, "LSTM")
      .def(nb::init<int64_t, bool>(), nb::arg("units"), nb::arg("return_sequences"));
  nb::class_<nn::GRU, nn::Layer>(m, "GRU")
      .def(nb::init<int64_t, bool>(), nb::arg("units"), nb::arg("return_sequences"));
  nb::class_<nn::Activation, nn::Layer>(m, "Activation")
      .def(nb::init<const std::string&>(), nb::arg("activation"));
  nb::class_<nn::ReLU, nn::Layer>(m, "ReLU").def(nb::init<>());
  nb::class_<nn::Softmax, nn::Layer>(m, "Softmax").def(nb::init<>());
  nb::class_<nn::LeakyReLU, nn::Layer>(m, "LeakyReLU").def(nb::init<double>(), nb::arg("alpha"));
  nb::class_<nn::ZeroPadding2D, nn::Layer>(m, "ZeroPadding2D")
      .def(nb::init<Size2, Size2, const std::string&>(), nb::arg("top_bottom"),
           nb::arg("left_right"), nb::arg("data_format"));
  nb::class_<nn::UpSampling2D, nn::Layer>(m, "UpSampling2D")
      .def(nb::init<Size2, const std::string&, const std::string&>(), nb::arg("size"),
           nb::arg("interpolation"), nb::arg("data_format"));

  m.def("set_global_policy", &nn::set_global_policy, nb::arg("policy"),
        "keras.mixed_precision.set_global_policy: layers made afterwards compute in it.");
  m.def("global_policy", &nn::global_policy);
}

}  // namespace dlrt::python
