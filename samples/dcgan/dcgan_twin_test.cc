// dcgan_twin_test.cc: samples/dcgan's networks and step against the PyTorch twin
// (tools/dlbench/torch_dcgan.py). testdata/twin_steps/ holds what `torch_dcgan.py
// --dump-step` wrote (its README has the command): torch's initial weights and moving
// statistics in dlrt's names and layouts, three batches of real images with the codes torch
// drew for them, and d_loss and g_loss at each of three steps (both Adams updating from one
// forward pass, as dcgan.cc's step). Dropout is 0 on both sides so that they compute the same
// thing. From those weights, fed the same codes, dlrt's step must give the same losses: the
// first step's within 1e-5 relative, the next two within 1e-4 (see vae_twin_test.cc).
#include <dlrt/nn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "dcgan/dcgan_models.hpp"

namespace nn = dlrt::nn;

namespace {

nn::Array array_of(const dlrt::SafeTensorView& v) {
  const float* p = static_cast<const float*>(v.data);
  return nn::Array::of<float>(v.dims, std::vector<float>(p, p + v.bytes / sizeof(float)));
}

TEST(DcganTwin, ThreeStepsOfBothOptimizersMatchPyTorch) {
  const std::string dir = std::string(DCGAN_TESTDATA) + "/twin_steps";
  const dlrt::SafeTensors weights = dlrt::SafeTensors::open(dir + "/weights.safetensors");
  const dlrt::SafeTensors batches = dlrt::SafeTensors::open(dir + "/batches.safetensors");
  std::ifstream loss_file(dir + "/losses.txt");
  std::vector<double> d_losses, g_losses;
  for (double d, g; loss_file >> d >> g;) {
    d_losses.push_back(d);
    g_losses.push_back(g);
  }
  ASSERT_EQ(d_losses.size(), 3u) << dir << "/losses.txt";

  dlrt::ContextOptions o;
  o.plugin_options("cpu:threads=1");
  dlrt::Context ctx(o);
  auto gen = dcgan::make_generator(ctx, batches.at("z0").dims.at(1));
  auto disc = dcgan::make_discriminator(ctx, /*dropout=*/0.0);
  nn::CompileConfig c;
  c.device = "CPU:0";
  gen->compile(c);
  disc->compile(c);
  std::vector<nn::Model::NamedValue> g_state, d_state;
  for (const dlrt::SafeTensorView& w : weights.entries()) {
    ASSERT_EQ(w.dtype, DLRT_F32) << w.name;
    const float* p = static_cast<const float*>(w.data);
    const size_t slash = w.name.find('/');
    nn::Model::NamedValue v{w.name.substr(slash + 1), w.dims,
                            std::vector<float>(p, p + w.bytes / sizeof(float))};
    (w.name.substr(0, slash) == "generator" ? g_state : d_state).push_back(std::move(v));
  }
  EXPECT_EQ(g_state.size(), gen->state().size());
  EXPECT_EQ(d_state.size(), disc->state().size());
  gen->set_state(g_state);
  disc->set_state(d_state);

  nn::BinaryCrossentropy bce(true);
  nn::Adam d_opt(2e-4, 0.5), g_opt(2e-4, 0.5);
  nn::TrainStep step(ctx, [&](nn::Tape& t) -> nn::StepMetrics {
    dlrt::Value real = t.input("x");
    dlrt::Value fake = (*gen)(t.input("z"));
    dlrt::Value real_logits = (*disc)(real), fake_logits = (*disc)(fake);
    dlrt::Value d_loss = t.op("add", {t.loss(bce, t.ones_like(real_logits), real_logits),
                                      t.loss(bce, t.zeros_like(fake_logits), fake_logits)});
    dlrt::Value g_loss = t.loss(bce, t.ones_like(fake_logits), fake_logits);
    t.minimize(d_loss, d_opt, disc->trainable_variables());
    t.minimize(g_loss, g_opt, gen->trainable_variables());
    return {{"d_loss", d_loss}, {"g_loss", g_loss}};
  });
  for (int k = 0; k < 3; ++k) {
    const std::string n = std::to_string(k);
    const nn::Array x = array_of(batches.at("x" + n)), z = array_of(batches.at("z" + n));
    const nn::Logs r = step.run({{"x", x}, {"z", z}});
    const double tol = k == 0 ? 1e-5 : 1e-4;
    const size_t s = static_cast<size_t>(k);
    EXPECT_NEAR(r.at(0).second, d_losses[s], tol * std::fabs(d_losses[s])) << "d_loss, step " << k;
    EXPECT_NEAR(r.at(1).second, g_losses[s], tol * std::fabs(g_losses[s])) << "g_loss, step " << k;
  }
}

}  // namespace
