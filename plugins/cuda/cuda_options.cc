// cuda_options.cc: the thread's CreatingScope (cuda_options.hpp). kernel_create opens one
// around an op's create; nested scopes restore the outer one.
#include "cuda_options.hpp"

namespace dlrt::cuda {
namespace {
const CudaOptions kDefaults{};
thread_local const CudaOptions* t_creating = nullptr;
}  // namespace

const CudaOptions& creating_options() { return t_creating != nullptr ? *t_creating : kDefaults; }

CreatingScope::CreatingScope(const CudaOptions& options) : previous_(t_creating) {
  t_creating = &options;
}
CreatingScope::~CreatingScope() { t_creating = previous_; }

}  // namespace dlrt::cuda
