// samples/vae/vae_model.hpp: the VAE of samples/vae (vae.cc says what it is), shared with
// dlbench's `train --model vae` and the PyTorch-twin test, so all three build one network.
#ifndef DLRT_SAMPLES_VAE_MODEL_HPP_
#define DLRT_SAMPLES_VAE_MODEL_HPP_

#include <dlrt/nn.hpp>

#include <memory>
#include <vector>

namespace vae {

namespace nn = dlrt::nn;

struct Vae {
  std::unique_ptr<nn::Model> encoder, decoder;
};

inline Vae make_vae(const dlrt::Context& ctx, int64_t latent) {
  nn::Input x({28, 28, 1});
  nn::SymbolicTensor h = nn::Conv2D(32, {3, 3}, {2, 2}, "same", "relu")(x);
  h = nn::Conv2D(64, {3, 3}, {2, 2}, "same", "relu")(h);
  h = nn::Flatten()(h);
  nn::SymbolicTensor mean = nn::Dense(latent)(h), log_var = nn::Dense(latent)(h);
  Vae v;
  v.encoder = std::make_unique<nn::Model>(ctx, std::vector<nn::SymbolicTensor>{x},
                                          std::vector<nn::SymbolicTensor>{mean, log_var},
                                          "encoder");
  nn::Input z({latent});
  nn::SymbolicTensor d = nn::Dense(7 * 7 * 32, "relu")(z);
  d = nn::Reshape({7, 7, 32})(d);
  nn::Conv2DTransposeOptions up;
  up.strides = {2, 2};
  up.padding = "same";
  up.activation = "relu";
  d = nn::Conv2DTranspose(64, {3, 3}, up)(d);
  d = nn::Conv2DTranspose(32, {3, 3}, up)(d);
  nn::Conv2DTransposeOptions last;
  last.padding = "same";
  d = nn::Conv2DTranspose(1, {3, 3}, last)(d);
  v.decoder = std::make_unique<nn::Model>(ctx, z, d, "decoder");
  return v;
}

// Per image: sum over pixels of BCE(logits, x) + KL(N(mean, exp(log_var)) || N(0, I)) -> (B).
// eps: N(0, I) noise of the latent's shape (B, latent); an invalid Value draws it in the step
// (Tape::random_normal). The twin test feeds PyTorch's.
inline dlrt::Value neg_elbo_per_image(nn::Tape& t, Vae& m, dlrt::Value x, bool training,
                                      dlrt::Value eps = dlrt::Value()) {
  const std::vector<dlrt::Value> q = (*m.encoder)({x}, training);
  dlrt::Value mean = q[0], log_var = q[1];
  if (!eps) eps = t.random_normal(mean.dims());
  dlrt::Value z = t.op("add", {mean, t.op("mul", {t.op("exp", {t.op("mul", {log_var,
                                                                           t.constant(0.5f)})}),
                                                  eps})});
  dlrt::Value logits = (*m.decoder)(z, training);
  dlrt::Value bce = nn::BinaryCrossentropy(true).per_element(t.graph(), logits, x);
  dlrt::Value rec = t.op("reduce_sum", {bce}, {{"axes", std::vector<int64_t>{1, 2, 3}}});
  return t.op("add", {rec, nn::kl_divergence_normal(t.graph(), mean, log_var)});
}

}  // namespace vae

#endif  // DLRT_SAMPLES_VAE_MODEL_HPP_
