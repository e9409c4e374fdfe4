// samples/dcgan/dcgan_models.hpp: the generator and discriminator of samples/dcgan (dcgan.cc
// says what they are), shared with the PyTorch-twin test.
#ifndef DLRT_SAMPLES_DCGAN_MODELS_HPP_
#define DLRT_SAMPLES_DCGAN_MODELS_HPP_

#include <dlrt/nn.hpp>

#include <memory>

namespace dcgan {

namespace nn = dlrt::nn;

inline std::unique_ptr<nn::Model> make_generator(const dlrt::Context& ctx, int64_t noise) {
  nn::Input z({noise});
  nn::SymbolicTensor h = nn::Dense(7 * 7 * 128)(z);
  h = nn::LeakyReLU(0.2)(nn::BatchNormalization()(h));
  h = nn::Reshape({7, 7, 128})(h);
  nn::Conv2DTransposeOptions up;
  up.strides = {2, 2};
  up.padding = "same";
  up.use_bias = false;
  h = nn::LeakyReLU(0.2)(nn::BatchNormalization()(nn::Conv2DTranspose(64, {4, 4}, up)(h)));
  nn::Conv2DTransposeOptions out = up;
  out.use_bias = true;
  out.activation = "tanh";
  return std::make_unique<nn::Model>(ctx, z, nn::Conv2DTranspose(1, {4, 4}, out)(h),
                                     "generator");
}

// dropout: Dropout's rate (0.3; the twin test sets 0 so that both sides compute the same).
inline std::unique_ptr<nn::Model> make_discriminator(const dlrt::Context& ctx,
                                                     double dropout = 0.3) {
  nn::Input x({28, 28, 1});
  nn::SymbolicTensor h = nn::Conv2D(64, {4, 4}, {2, 2}, "same")(x);
  h = nn::Dropout(dropout)(nn::LeakyReLU(0.2)(h));
  h = nn::Conv2D(128, {4, 4}, {2, 2}, "same")(h);
  h = nn::Dropout(dropout)(nn::LeakyReLU(0.2)(h));
  return std::make_unique<nn::Model>(ctx, x, nn::Dense(1)(nn::Flatten()(h)), "discriminator");
}

}  // namespace dcgan

#endif  // DLRT_SAMPLES_DCGAN_MODELS_HPP_
