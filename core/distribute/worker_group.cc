// worker_group.cc: see worker_group.hpp.
#include "distribute/worker_group.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string_view>

#include "context.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

constexpr const char* kMpiName = "mpi";
constexpr const char* kMpiFile = "libdlrt-mpi.so";

bool is_mpi_record(const Plugin& p) {
  if (p.name == kMpiName) return true;
  // A plugin that failed before its name was read is known by its file.
  const std::string_view path = p.path;
  const size_t slash = path.rfind('/');
  return path.substr(slash == std::string_view::npos ? 0 : slash + 1) == kMpiFile;
}

// The host-memory entries a worker group calls.
bool has_host_entries(const dlrt_collective_api* c) {
  return c != nullptr && c->comm_create != nullptr && c->comm_destroy != nullptr &&
         c->comm_abort != nullptr && c->all_reduce != nullptr && c->broadcast != nullptr;
}

// Every worker passes the same id: a host-memory communicator over MPI spans the job's
// processes (MPI_COMM_WORLD), so it needs no id from a rank; the bytes only name its purpose.
void world_id(uint8_t id[DLRT_COMM_ID_BYTES]) {
  std::memset(id, 0, DLRT_COMM_ID_BYTES);
  static const char kTag[] = "dlrt strategy workers";
  std::memcpy(id, kTag, sizeof kTag);
}

}  // namespace

const Plugin& find_mpi_plugin(const Context& ctx, const WorkerEnv& worker) {
  std::string why = "no plugin file libdlrt-mpi.so was found where plugins are searched "
                    "(DLRT_PLUGIN_PATH, the install's lib/dlrt/plugins; a build without MPI "
                    "has none: configure with -DDLRT_BUILD_MPI=ON)";
  for (const auto& p : ctx.plugins()) {
    if (!is_mpi_record(*p)) continue;
    if (p->usable() && has_host_entries(p->api().collectives)) return *p;
    if (p->usable())
      why = fmt::format("{} loaded but offers no host-memory collectives", p->path);
    else
      why = fmt::format("{} did not load: {} ({})", p->path, p->error, dlrt_code_name(p->code));
  }
  fail(DLRT_FAILED_PRECONDITION,
       fmt::format("dlrt_strategy_create: multi-worker needs the mpi plugin (libdlrt-mpi.so) to "
                   "join {} workers ({} says this is rank {}), but {}; dlprobe shows why it did "
                   "not load",
                   worker.size, worker.source, worker.rank, why));
}

WorkerGroup::WorkerGroup(const Context& ctx, const WorkerEnv& worker, int64_t timeout_ms)
    : plugin_(find_mpi_plugin(ctx, worker)), worker_(worker) {
  uint8_t id[DLRT_COMM_ID_BYTES];
  world_id(id);
  plugin_call(fmt::format("joining {} workers as rank {} (mpi comm_create)", worker.size,
                          worker.rank),
              [&] {
                return coll().comm_create(nullptr, id, worker.size, worker.rank, timeout_ms,
                                          &comm_);
              });
}

WorkerGroup::~WorkerGroup() {
  if (comm_ != nullptr) plugin_call_noexcept([&] { coll().comm_destroy(comm_); });
}

const dlrt_collective_api& WorkerGroup::coll() const { return *plugin_.api().collectives; }

bool WorkerGroup::abort() noexcept {
  if (comm_ == nullptr) return false;
  plugin_call_noexcept([&] { coll().comm_abort(comm_); });
  comm_ = nullptr;
  return true;
}

void WorkerGroup::all_reduce_sum(float* data, size_t count) {
  if (comm_ == nullptr) fail(DLRT_FAILED_PRECONDITION, "the workers' communicator was aborted");
  plugin_call(fmt::format("all_reduce of {} floats between workers (mpi)", count), [&] {
    return coll().all_reduce(comm_, data, data, count, DLRT_F32, DLRT_REDUCE_SUM, nullptr);
  });
}

void WorkerGroup::broadcast(void* data, size_t bytes) {
  if (comm_ == nullptr) fail(DLRT_FAILED_PRECONDITION, "the workers' communicator was aborted");
  plugin_call(fmt::format("broadcast of {} bytes from worker 0 (mpi)", bytes), [&] {
    return coll().broadcast(comm_, data, data, bytes, DLRT_U8, 0, nullptr);
  });
}

WorkerGroup::Agreement WorkerGroup::agree(const std::vector<int64_t>& mine) {
  Agreement a;
  int64_t count = static_cast<int64_t>(mine.size());
  broadcast(&count, sizeof count);
  a.worker0 = rank() == 0 ? mine : std::vector<int64_t>(static_cast<size_t>(count));
  broadcast(a.worker0.data(), a.worker0.size() * sizeof(int64_t));
  // A count of workers is exact in f32 far beyond any job's size.
  float differs = a.worker0 == mine ? 0.0f : 1.0f;
  all_reduce_sum(&differs, 1);
  a.disagreeing = static_cast<int32_t>(differs + 0.5f);
  return a;
}

}  // namespace dlrt::core::distribute
