// multi_worker_driver.cc: run under `mpirun -np 2` by the CTest scripts beside it, one
// process per rank, each training a small CNN on synthetic 8x8 images with
// nn::MultiWorkerMirroredStrategy over its CPU:0.
//
//   multi_worker_driver equivalence
//       trains 3 epochs (global batch 12 over 2 workers; 62 rows, so the last batch is
//       partial) and checks, on every rank: after every epoch its weights are bitwise those
//       of rank 0 (rank 0's state is broadcast and compared); at the end they equal a
//       single-process model trained on the same global batches within 1e-4.
//   multi_worker_driver train CHECKPOINT [--resume] [--die RANK:EPOCH:STEP]
//       trains 3 epochs with Dropout, rank 0 checkpointing after every epoch (ModelCheckpoint
//       is chief-only); --resume continues from CHECKPOINT when it exists; --die makes rank
//       RANK kill itself (SIGKILL) after step STEP of epoch EPOCH (0-based), as a crashed
//       worker would. A surviving rank prints "RANK<r>_ERROR: <what>" and exits 3.
//   multi_worker_driver custom_step
//       runs a custom step (nn::TrainStep, a classifier's loss and Adam) 5 times on global
//       batches of 12 rows under the strategy; rank 1's model starts from other weights
//       (another seed), which the chief's broadcast replaces. Checks on every rank: the step's
//       variables are bitwise rank 0's, and equal a single-process step on the same batches
//       within 1e-4, and the returned loss equals the single-process loss within 1e-5.
//   multi_worker_driver same A B
//       exit 0 when checkpoints A and B hold bitwise the same tensors, else 1.
// Every rank prints "RANK<r>_OK" when its checks passed. Collective timeout: 5 s unless
// DLRT_COLLECTIVE_TIMEOUT says otherwise.
#include <dlrt/nn.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace nn = dlrt::nn;

namespace {

dlrt::Context cpu_context() {
  dlrt::ContextOptions o;
  o.plugin_path(DLRT_TEST_PLUGIN_DIR)
      .search_default_paths(false)
      .plugin_options("cpu:threads=1")
      .visible_devices("CPU")
      .log_level(DLRT_LOG_ERROR);
  return dlrt::Context(o);
}

void images(int n, unsigned seed, nn::Array* x, nn::Array* y) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dim(0, 60), bright(150, 255);
  std::vector<uint8_t> px, labels;
  for (int i = 0; i < n; ++i) {
    labels.push_back(static_cast<uint8_t>(i % 2));
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c)
        px.push_back(static_cast<uint8_t>((r < 4) == (i % 2 == 0) ? bright(gen) : dim(gen)));
  }
  *x = nn::Array(DLRT_U8, {n, 8, 8, 1}, px);
  *y = nn::Array(DLRT_U8, {n}, labels);
}

std::unique_ptr<nn::Sequential> cnn(const dlrt::Context& ctx, bool dropout,
                                    const nn::DistributionStrategy* strategy) {
  auto m = std::make_unique<nn::Sequential>(
      ctx, std::initializer_list<nn::LayerRef>{nn::Input({8, 8, 1}), nn::Conv2D(4, {3, 3}, "relu"),
                                               nn::MaxPool2D(), nn::Flatten()});
  if (dropout) m->add(nn::Dropout(0.3));
  m->add(nn::Dense(8, "relu"));
  m->add(nn::Dense(2));
  nn::CompileConfig c;
  c.seed = 5;
  std::unique_ptr<nn::StrategyScope> scope;
  if (strategy != nullptr) scope = std::make_unique<nn::StrategyScope>(*strategy);
  m->compile(nn::Adam(0.01), nn::SparseCategoricalCrossentropy(true), {"accuracy"}, c);
  return m;
}

nn::FitOptions quiet(int64_t epochs) {
  nn::FitOptions f;
  f.epochs = epochs;
  f.batch_size = 12;
  f.progress.verbose = 0;
  return f;
}

std::vector<float> flat_state(nn::Sequential& m) {
  std::vector<float> out;
  for (const auto& v : m.state()) out.insert(out.end(), v.values.begin(), v.values.end());
  return out;
}

// After every epoch: rank 0's weights, broadcast, must equal this rank's bit for bit.
class SameOnEveryRank : public nn::Callback {
 public:
  SameOnEveryRank(const dlrt::Context& ctx, const nn::DistributionStrategy& s) : ctx_(ctx), s_(s) {}
  void on_epoch_end(nn::Sequential& m, int64_t epoch, const nn::Logs&) override {
    const std::vector<float> mine = flat_state(m);
    dlrt::Tensor t = dlrt::Tensor::create(ctx_, s_.impl()->replica_device(0), DLRT_F32,
                                          {static_cast<int64_t>(mine.size())});
    t.write(mine);
    s_.impl()->broadcast({&t}, 1);
    if (t.read<float>() != mine) {
      std::printf("RANK%d_FAIL: weights differ from rank 0 after epoch %lld\n", s_.rank(),
                  static_cast<long long>(epoch));
      failed = true;
    }
  }
  bool failed = false;

 private:
  const dlrt::Context& ctx_;
  const nn::DistributionStrategy& s_;
};

// Kills this process (as a crash would: no cleanup) after step `step` of epoch `epoch`.
class DieAt : public nn::Callback {
 public:
  DieAt(int64_t epoch, int64_t step) : epoch_(epoch), step_(step) {}
  void on_epoch_begin(nn::Sequential&, int64_t epoch) override { current_ = epoch; }
  void on_train_batch_end(nn::Sequential&, int64_t step, const nn::Logs&) override {
    if (current_ == epoch_ && step == step_) {
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
  }

 private:
  int64_t epoch_, step_, current_ = -1;
};

int equivalence() {
  dlrt::Context ctx = cpu_context();
  nn::MultiWorkerMirroredStrategy strategy(ctx, {}, 5000);
  nn::Array x, y;
  images(62, 1, &x, &y);
  auto single = cnn(ctx, false, nullptr);
  single->fit(x, y, quiet(3));
  auto mw = cnn(ctx, false, &strategy);
  nn::FitOptions f = quiet(3);
  auto same = std::make_shared<SameOnEveryRank>(ctx, strategy);
  f.callbacks.push_back(same);
  mw->fit(x, y, f);
  const std::vector<float> a = flat_state(*single), b = flat_state(*mw);
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  std::printf("RANK%d: %d workers, max |single - multi-worker| = %.3g\n", strategy.rank(),
              strategy.num_workers(), worst);
  if (strategy.num_workers() != 2 || worst > 1e-4 || same->failed) {
    std::printf("RANK%d_FAIL\n", strategy.rank());
    return 1;
  }
  std::printf("RANK%d_OK\n", strategy.rank());
  return 0;
}

// Rows [first, first + count) of a.
nn::Array rows(const nn::Array& a, int64_t first, int64_t count) {
  const size_t rb = a.row_bytes();
  std::vector<uint8_t> bytes(a.data() + first * rb, a.data() + (first + count) * rb);
  std::vector<int64_t> dims = a.dims();
  dims[0] = count;
  return nn::Array(a.dtype(), dims, std::move(bytes));
}

int custom_step() {
  dlrt::Context ctx = cpu_context();
  nn::MultiWorkerMirroredStrategy strategy(ctx, {}, 5000);
  nn::Array x8, y;
  images(60, 3, &x8, &y);
  std::vector<float> xf;
  for (uint8_t v : x8.bytes()) xf.push_back(v / 255.f);
  const nn::Array x = nn::Array::of<float>(x8.dims(), xf);
  nn::SparseCategoricalCrossentropy loss(true);
  nn::Adam adam(0.01);
  auto make = [&](uint64_t seed) {
    auto m = cnn(ctx, false, nullptr);
    nn::CompileConfig c;
    c.seed = seed;
    m->compile(c);
    return m;
  };
  auto fn = [&loss, &adam](nn::Model& m) {
    return [&m, &loss, &adam](nn::Tape& t) -> nn::StepMetrics {
      dlrt::Value l = t.loss(loss, t.input("y"), m(t.input("x")));
      t.minimize(l, adam, m.trainable_variables());
      return {{"loss", l}};
    };
  };
  auto single = make(5);
  nn::StepOptions one;
  one.device = "/CPU:0";
  nn::TrainStep s(ctx, fn(*single), one);
  auto mine = make(strategy.rank() == 0 ? 5 : 6);  // rank 1 differs until the broadcast
  nn::StepOptions o;
  o.strategy = &strategy;
  nn::TrainStep m(ctx, fn(*mine), o);
  bool ok = m.replicas_in_sync() == 2;
  double worst_loss = 0;
  for (int64_t first = 0; first < 60; first += 12) {
    const nn::Array xb = rows(x, first, 12), yb = rows(y, first, 12);
    const double a = s.run({{"x", xb}, {"y", yb}}).at(0).second;
    const double b = m.run({{"x", xb}, {"y", yb}}).at(0).second;
    worst_loss = std::max(worst_loss, std::fabs(a - b));
  }
  std::vector<float> a, b;
  for (const auto& v : s.state()) a.insert(a.end(), v.values.begin(), v.values.end());
  for (const auto& v : m.state()) b.insert(b.end(), v.values.begin(), v.values.end());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  dlrt::Tensor t = dlrt::Tensor::create(ctx, strategy.impl()->replica_device(0), DLRT_F32,
                                        {static_cast<int64_t>(b.size())});
  t.write(b);
  strategy.impl()->broadcast({&t}, 1);
  const bool same_as_chief = t.read<float>() == b;
  std::printf("RANK%d: custom step, max |single - multi-worker| = %.3g, loss %.3g, %s rank 0\n",
              strategy.rank(), worst, worst_loss, same_as_chief ? "same as" : "differs from");
  ok = ok && worst <= 1e-4 && worst_loss <= 1e-5 && same_as_chief && a.size() == b.size();
  std::printf(ok ? "RANK%d_OK\n" : "RANK%d_FAIL\n", strategy.rank());
  return ok ? 0 : 1;
}

int train(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string path = argv[2];
  bool resume = false;
  int die_rank = -1;
  long long die_epoch = -1, die_step = -1;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--resume") resume = true;
    if (a == "--die" && i + 1 < argc &&
        std::sscanf(argv[++i], "%d:%lld:%lld", &die_rank, &die_epoch, &die_step) != 3)
      return 2;
  }
  dlrt::Context ctx = cpu_context();
  nn::MultiWorkerMirroredStrategy strategy(ctx);
  nn::Array x, y;
  images(62, 2, &x, &y);
  auto m = cnn(ctx, true, &strategy);
  nn::FitOptions f = quiet(3);
  if (resume && std::filesystem::exists(path)) {
    m->load_weights(path);
    f.initial_epoch = m->epoch();
    std::printf("RANK%d: resumed after epoch %lld\n", strategy.rank(),
                static_cast<long long>(m->epoch()));
  }
  f.callbacks.push_back(std::make_shared<nn::ModelCheckpoint>(path));
  if (strategy.rank() == die_rank)
    f.callbacks.push_back(std::make_shared<DieAt>(die_epoch, die_step));
  try {
    m->fit(x, y, f);
  } catch (const dlrt::Error& e) {
    std::printf("RANK%d_ERROR: %s\n", strategy.rank(), e.what());
    std::fflush(stdout);
    return 3;
  }
  std::printf("RANK%d_OK\n", strategy.rank());
  return 0;
}

int same(const std::string& a, const std::string& b) {
  const dlrt::SafeTensors fa = dlrt::SafeTensors::open(a), fb = dlrt::SafeTensors::open(b);
  const auto ea = fa.entries(), eb = fb.entries();
  if (ea.size() != eb.size()) return 1;
  for (size_t i = 0; i < ea.size(); ++i) {
    const auto* pa = static_cast<const unsigned char*>(ea[i].data);
    const auto* pb = static_cast<const unsigned char*>(eb[i].data);
    if (ea[i].name != eb[i].name || ea[i].bytes != eb[i].bytes ||
        !std::equal(pa, pa + ea[i].bytes, pb)) {
      std::printf("tensor %s differs\n", ea[i].name.c_str());
      return 1;
    }
  }
  std::printf("SAME: %zu tensors\n", ea.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "equivalence") return equivalence();
    if (mode == "custom_step") return custom_step();
    if (mode == "train") return train(argc, argv);
    if (mode == "same" && argc == 4) return same(argv[2], argv[3]);
  } catch (const std::exception& e) {
    std::printf("ERROR: %s\n", e.what());
    return 4;
  }
  std::fprintf(stderr,
               "usage: multi_worker_driver equivalence | custom_step | train CKPT [--resume] "
               "[--die R:E:S] | same A B\n");
  return 2;
}
