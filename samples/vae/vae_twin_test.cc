// vae_twin_test.cc: samples/vae's network and step against its PyTorch twin
// (tools/dlbench/torch_vae.py). testdata/twin_steps/ holds what `torch_vae.py --dump-step`
// wrote (its README has the command): torch's initial weights in dlrt's names and layouts,
// three batches with the reparameterisation noise torch drew for them, and the loss (the
// negative ELBO, nats per image) torch computed at each of three Adam steps. From those
// weights, fed the same noise, dlrt's custom step must compute the same losses: the first
// within 1e-5 relative (the same forward pass), the next two within 1e-4 (Adam's first
// updates move every weight by about the rate, so rounding differences of near-zero
// gradients show up a little).
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "vae/vae_model.hpp"

namespace nn = dlrt::nn;

namespace {

nn::Array array_of(const dlrt::SafeTensorView& v) {
  const float* p = static_cast<const float*>(v.data);
  return nn::Array::of<float>(v.dims, std::vector<float>(p, p + v.bytes / sizeof(float)));
}

TEST(VaeTwin, ThreeAdamStepsMatchPyTorch) {
  const std::string dir = std::string(VAE_TESTDATA) + "/twin_steps";
  const dlrt::SafeTensors weights = dlrt::SafeTensors::open(dir + "/weights.safetensors");
  const dlrt::SafeTensors batches = dlrt::SafeTensors::open(dir + "/batches.safetensors");
  std::ifstream loss_file(dir + "/losses.txt");
  std::vector<double> torch_losses;
  for (double l; loss_file >> l;) torch_losses.push_back(l);
  ASSERT_EQ(torch_losses.size(), 3u) << dir << "/losses.txt";

  dlrt::ContextOptions o;
  o.plugin_options("cpu:threads=1");
  dlrt::Context ctx(o);
  vae::Vae m = vae::make_vae(ctx, batches.at("eps0").dims.at(1));
  nn::CompileConfig c;
  c.device = "CPU:0";
  m.encoder->compile(c);
  m.decoder->compile(c);
  // "encoder/conv2d/kernel" -> the encoder's "conv2d/kernel"; every weight must be there.
  std::vector<nn::Model::NamedValue> enc, dec;
  for (const dlrt::SafeTensorView& w : weights.entries()) {
    ASSERT_EQ(w.dtype, DLRT_F32) << w.name;
    const float* p = static_cast<const float*>(w.data);
    const size_t slash = w.name.find('/');
    nn::Model::NamedValue v{w.name.substr(slash + 1), w.dims,
                            std::vector<float>(p, p + w.bytes / sizeof(float))};
    (w.name.substr(0, slash) == "encoder" ? enc : dec).push_back(std::move(v));
  }
  EXPECT_EQ(enc.size(), m.encoder->state().size());
  EXPECT_EQ(dec.size(), m.decoder->state().size());
  m.encoder->set_state(enc);
  m.decoder->set_state(dec);

  nn::Adam adam(1e-3);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value loss =
        t.mean(vae::neg_elbo_per_image(t, m, t.input("x"), true, t.input("eps")));
    std::vector<nn::Variable> vars = m.encoder->trainable_variables();
    for (const nn::Variable& v : m.decoder->trainable_variables()) vars.push_back(v);
    t.minimize(loss, adam, vars);
    return {{"loss", loss}};
  });
  for (int k = 0; k < 3; ++k) {
    const std::string n = std::to_string(k);
    const nn::Array x = array_of(batches.at("x" + n)), eps = array_of(batches.at("eps" + n));
    const double loss = step.run({{"x", x}, {"eps", eps}}).at(0).second;
    const double torch = torch_losses[static_cast<size_t>(k)];
    EXPECT_NEAR(loss, torch, (k == 0 ? 1e-5 : 1e-4) * std::fabs(torch)) << "step " << k;
  }
}

}  // namespace
