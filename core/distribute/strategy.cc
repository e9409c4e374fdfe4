// strategy.cc: see strategy.hpp.
#include "distribute/strategy.hpp"

#include <fmt/format.h>

#include <new>

#include "context.hpp"
#include "distribute/device_path.hpp"
#include "distribute/host_path.hpp"
#include "distribute/replica_devices.hpp"
#include "distribute/worker_group.hpp"
#include "log.hpp"
#include "ops/shape_util.hpp"
#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

// How many distinct layouts the workers' agreement is remembered for (a training loop has
// two or three: gradients, weights); past it the set starts over, on every worker alike.
constexpr size_t kMaxAgreedLayouts = 64;

std::string describe_tensor(const std::vector<int64_t>& sig, size_t k) {
  return fmt::format("{} with {} elements",
                     ops::dtype_name(static_cast<dlrt_dtype>(sig[2 + 2 * k])), sig[3 + 2 * k]);
}

// Where this worker's layout signature (`mine`) first differs from worker 0's.
std::string first_difference(const std::vector<int64_t>& mine, const std::vector<int64_t>& worker0,
                             int32_t rank) {
  if (worker0.size() < 2 || mine[0] != worker0[0])
    return fmt::format(
        "worker {} called {} while worker 0 called {}", rank,
        collective_name(static_cast<Collective>(mine[0])),
        worker0.empty() ? "?" : collective_name(static_cast<Collective>(worker0[0])));
  if (mine[1] != worker0[1])
    return fmt::format("worker {} passes {} tensors per replica, worker 0 passes {}", rank, mine[1],
                       worker0[1]);
  for (size_t k = 0; 2 + 2 * k + 1 < mine.size(); ++k)
    if (mine[2 + 2 * k] != worker0[2 + 2 * k] || mine[3 + 2 * k] != worker0[3 + 2 * k])
      return fmt::format("tensor {} of each replica is {} on worker {}, {} on worker 0", k,
                         describe_tensor(mine, k), rank, describe_tensor(worker0, k));
  return "the layouts differ";
}

}  // namespace

Strategy::Strategy(Context& ctx, const StrategyConfig& config, const EnvLookup& env) : ctx_(ctx) {
  if (config.timeout_ms < 0)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("dlrt_strategy_create: options->timeout_ms is {}; expected milliseconds > 0, "
                     "or 0 for DLRT_COLLECTIVE_TIMEOUT",
                     config.timeout_ms));
  timeout_ms_ = config.timeout_ms > 0 ? config.timeout_ms : ctx.settings().collective_timeout_ms();
  devices_ = resolve_replica_devices(ctx, config.devices);
  if (config.multi_worker) worker_ = read_worker_env(env);

  path_reason_ = DevicePath::unusable_reason(ctx, devices_);
  path_ = path_reason_.empty() ? Path::kDevice : Path::kHost;
  if (path_ == Path::kDevice)
    path_reason_ = fmt::format("every replica's plugin ('{}') offers collectives",
                               ctx.plugin_of(devices_[0]).name);

  if (worker_.size > 1) {
    workers_ = std::make_unique<WorkerGroup>(ctx, worker_, timeout_ms_);
    // Every worker must take the same path, and on the device path have as many replicas
    // (the communicator's ranks are worker * replicas + replica).
    const bool device = path_ == Path::kDevice;
    const std::vector<int64_t> mine = {device ? 1 : 0,
                                       device ? static_cast<int64_t>(devices_.size()) : 0};
    WorkerGroup::Agreement a;
    try {
      a = workers_->agree(mine);
    } catch (...) {
      workers_->abort();
      throw;
    }
    if (a.disagreeing > 0) {
      auto text = [](const std::vector<int64_t>& v) {
        return v.size() == 2 && v[0] == 1
                   ? fmt::format("the device path with {} local replicas", v[1])
                   : std::string("the host path");
      };
      fail(DLRT_INVALID_ARGUMENT,
           fmt::format("dlrt_strategy_create: the workers disagree on how to reduce: worker {} "
                       "takes {} ({}), worker 0 takes {}; {} worker(s) differ from worker 0. "
                       "Give every worker the same kind and number of devices",
                       worker_.rank, text(mine), path_reason_, text(a.worker0), a.disagreeing));
    }
  }
  if (path_ == Path::kDevice) {
    try {
      device_path_ = std::make_unique<DevicePath>(ctx, devices_, workers_.get(), timeout_ms_);
    } catch (...) {
      if (workers_) workers_->abort();  // the peers may be half way through joining
      throw;
    }
  } else {
    host_path_ = std::make_unique<HostPath>(workers_.get());
  }

  std::string names;
  for (size_t d : devices_) names += (names.empty() ? "" : ", ") + ctx.device_name(d);
  log(DLRT_LOG_INFO, "strategy",
      "{} replica(s) on {}; worker {} of {} (local rank {}); {} path: "
      "{}; timeout {} ms",
      devices_.size(), names, worker_.rank, worker_.size, worker_.local_rank,
      path_ == Path::kDevice ? "device" : "host", path_reason_, timeout_ms_);
}

Strategy::~Strategy() {
  // Healthy: comm_destroy (devices first, then the workers' communicator they were made
  // with). Broken: everything was aborted already; only streams and buffers are left.
  device_path_.reset();
  host_path_.reset();
  workers_.reset();
}

size_t Strategy::replica_device(size_t replica) const {
  if (replica >= devices_.size())
    fail(DLRT_OUT_OF_RANGE, fmt::format("replica {} is out of range; the strategy has {} "
                                        "replica(s)",
                                        replica, devices_.size()));
  return devices_[replica];
}

bool Strategy::broken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

size_t Strategy::communicators_aborted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborted_ + (device_path_ ? device_path_->aborted_count() : 0);
}

void Strategy::all_reduce(dlrt_tensor* const* tensors, size_t per_replica) {
  run(Collective::kAllReduce, tensors, per_replica);
}

void Strategy::broadcast(dlrt_tensor* const* tensors, size_t per_replica) {
  run(Collective::kBroadcast, tensors, per_replica);
}

void Strategy::run(Collective c, dlrt_tensor* const* tensors, size_t per_replica) {
  std::lock_guard<std::mutex> lock(mu_);
  check_healthy(collective_name(c));
  const Layout layout = check_layout(ctx_, c, devices_, tensors, per_replica);
  if (workers_) agree_on_layout(c, layout);
  communicate([&] {
    if (device_path_) {
      if (c == Collective::kAllReduce) device_path_->all_reduce(layout);
      else device_path_->broadcast(layout);
    } else {
      if (c == Collective::kAllReduce) host_path_->all_reduce(layout);
      else host_path_->broadcast(layout);
    }
  });
}

void Strategy::check_healthy(const char* call) const {
  if (!broken_) return;
  fail(DLRT_FAILED_PRECONDITION,
       fmt::format("{}: the strategy is broken: an earlier collective failed and its "
                   "communicators were aborted, so no later one can complete; make a new "
                   "strategy on every worker after fixing the cause. The first error was {}: {}",
                   call, dlrt_code_name(first_code_), first_message_));
}

void Strategy::agree_on_layout(Collective c, const Layout& layout) {
  const std::vector<int64_t> mine = layout.signature(c);
  if (agreed_layouts_.count(mine) != 0) return;
  WorkerGroup::Agreement a;
  communicate([&] { a = workers_->agree(mine); });
  if (a.disagreeing > 0) {
    // Every worker learns of it (the count is summed over all), so every worker fails here
    // and none is left waiting in a collective the others never start.
    const std::string where =
        a.worker0 == mine
            ? fmt::format(
                  "this worker's layout matches worker 0's; {} other worker(s) differ "
                  "(their errors say how)",
                  a.disagreeing)
            : first_difference(mine, a.worker0, worker_.rank);
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: the workers call with different layouts: {}; every worker must pass "
                     "the same dtypes and element counts in the same order",
                     collective_name(c), where));
  }
  if (agreed_layouts_.size() >= kMaxAgreedLayouts) agreed_layouts_.clear();
  agreed_layouts_.insert(mine);
}

template <typename Fn>
void Strategy::communicate(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    break_with(e.code(), e.message());
  } catch (const std::bad_alloc&) {
    break_with(DLRT_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    break_with(DLRT_INTERNAL, e.what());
  }
}

void Strategy::break_with(dlrt_code code, const std::string& message) {
  broken_ = true;
  first_code_ = code;
  first_message_ = message;
  if (device_path_) device_path_->abort();  // those the watchdog has not aborted already
  if (workers_ && workers_->abort()) ++aborted_;
  log(DLRT_LOG_ERROR, "strategy",
      "a collective failed; the strategy is now broken, its "
      "communicators aborted: {}: {}",
      dlrt_code_name(code), message);
  fail(code, message +
                 "; the strategy is now broken: its communicators were aborted and every "
                 "later call fails");
}

}  // namespace dlrt::core::distribute
