// distribute.cc: nn's MirroredStrategy and MultiWorkerMirroredStrategy for dlrt.distribute,
// and the strategy scope that compile() reads (nn::detail::current_strategy, one per thread:
// compile runs on the thread that entered the scope).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlrt/nn.hpp>

#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "runtime.hpp"

namespace dlrt::python {

namespace {

namespace nn = dlrt::nn;

// A strategy and the context it was made in.
struct StrategyHandle {
  std::shared_ptr<dlrt::Context> context;
  std::unique_ptr<nn::DistributionStrategy> strategy;
};

}  // namespace

void bind_distribute(nb::module_& m) {
  m.def(
      "worker_info",
      [] {
        dlrt_worker_info w{};
        w.struct_size = DLRT_STRUCT_SIZE(dlrt_worker_info);
        dlrt::check(dlrt_worker_info_get(&w));
        nb::dict d;
        d["task_id"] = w.rank;
        d["num_workers"] = w.size;
        d["local_rank"] = w.local_rank;
        d["source"] = w.source != nullptr ? w.source : "";
        return d;
      },
      "This process's place in a multi-worker job, as a strategy made now reads it.");
  nb::class_<StrategyHandle>(m, "Strategy")
      .def_static(
          "mirrored",
          [](const std::vector<std::string>& devices, int64_t timeout_ms) {
            auto ctx = Runtime::instance().context();
            std::unique_ptr<nn::DistributionStrategy> s;
            {
              nb::gil_scoped_release no_gil;
              s = std::make_unique<nn::MirroredStrategy>(*ctx, devices, timeout_ms);
            }
            return StrategyHandle{ctx, std::move(s)};
          },
          nb::arg("devices"), nb::arg("timeout_ms"))
      .def_static(
          "multi_worker",
          [](const std::vector<std::string>& devices, int64_t timeout_ms) {
            auto ctx = Runtime::instance().context();
            std::unique_ptr<nn::DistributionStrategy> s;
            {
              nb::gil_scoped_release no_gil;  // joining waits for every worker
              s = std::make_unique<nn::MultiWorkerMirroredStrategy>(*ctx, devices, timeout_ms);
            }
            return StrategyHandle{ctx, std::move(s)};
          },
          nb::arg("devices"), nb::arg("timeout_ms"))
      .def_prop_ro("num_replicas_in_sync",
                   [](const StrategyHandle& h) { return h.strategy->num_replicas_in_sync(); })
      .def_prop_ro("num_local_replicas",
                   [](const StrategyHandle& h) { return h.strategy->num_local_replicas(); })
      .def_prop_ro("rank", [](const StrategyHandle& h) { return h.strategy->rank(); })
      .def_prop_ro("num_workers", [](const StrategyHandle& h) { return h.strategy->num_workers(); })
      .def_prop_ro("devices", [](const StrategyHandle& h) { return h.strategy->devices(); })
      .def("enter_scope",
           [](const StrategyHandle& h) {
             const nn::DistributionStrategy* previous = nn::detail::current_strategy();
             nn::detail::current_strategy() = h.strategy.get();
             return reinterpret_cast<uintptr_t>(previous);
           })
      .def_static("exit_scope", [](uintptr_t previous) {
        nn::detail::current_strategy() = reinterpret_cast<const nn::DistributionStrategy*>(previous);
      });
}

}  // namespace dlrt::python
