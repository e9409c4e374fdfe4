// worker_group.cc: see worker_group.hpp.
#include "distribute/worker_group.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <string>
#include <vector>

#include "context.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core::distribute {
namespace {

// Does the table say it makes host-memory communicators (plugin.h, ABI 1.2 flags)? A table
// whose struct_size ends before `flags` (a 1.0/1.1 plugin) offers device collectives only.
bool works_on_host_memory(const dlrt_collective_api* c) {
  return c != nullptr && DLRT_HAS_FIELD(dlrt_collective_api, flags, c->struct_size) &&
         (c->flags & DLRT_COLLECTIVES_HOST_MEMORY) != 0;
}

// The host-memory entries a worker group calls.
bool has_host_entries(const dlrt_collective_api* c) {
  return c->comm_create != nullptr && c->comm_destroy != nullptr && c->comm_abort != nullptr &&
         c->all_reduce != nullptr && c->broadcast != nullptr;
}

// Every worker passes the same id: a host-memory communicator (e.g. over MPI) spans the job's
// processes (MPI_COMM_WORLD), so it needs no id from a rank; the bytes only name its purpose.
void world_id(uint8_t id[DLRT_COMM_ID_BYTES]) {
  std::memset(id, 0, DLRT_COMM_ID_BYTES);
  static const char kTag[] = "dlrt strategy workers";
  std::memcpy(id, kTag, sizeof kTag);
}

}  // namespace

const Plugin& find_host_transport(const Context& ctx, const WorkerEnv& worker) {
  std::vector<std::string> seen;  // why the plugins that could not serve did not
  for (const auto& p : ctx.plugins()) {
    if (!p->usable()) {
      // A plugin that did not load may be the transport; its record says why it is missing.
      seen.push_back(
          fmt::format("{} did not load: {} ({})", p->path, p->error, dlrt_code_name(p->code)));
      continue;
    }
    const dlrt_collective_api* c = p->api().collectives;
    if (!works_on_host_memory(c)) continue;
    if (has_host_entries(c)) return *p;
    seen.push_back(
        fmt::format("{} says its collectives work on host memory but leaves "
                    "comm_create, comm_destroy, comm_abort, all_reduce or broadcast "
                    "NULL",
                    p->path));
  }
  std::string why = "no loaded plugin offers collectives that work on host memory";
  if (!seen.empty()) why += fmt::format(" ({})", fmt::join(seen, "; "));
  fail(DLRT_FAILED_PRECONDITION,
       fmt::format("dlrt_strategy_create: multi-worker needs a plugin whose collectives work on "
                   "host memory, such as the mpi plugin (libdlrt-mpi.so; a build without MPI "
                   "has none: configure with -DDLRT_BUILD_MPI=ON), to join {} workers ({} says "
                   "this is rank {}), but {}; dlprobe shows which plugins loaded and why others "
                   "did not",
                   worker.size, worker.source, worker.rank, why));
}

WorkerGroup::WorkerGroup(const Context& ctx, const WorkerEnv& worker, int64_t timeout_ms)
    : plugin_(find_host_transport(ctx, worker)), worker_(worker) {
  uint8_t id[DLRT_COMM_ID_BYTES];
  world_id(id);
  plugin_call(fmt::format("joining {} workers as rank {} (host transport comm_create)", worker.size,
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
  plugin_call(fmt::format("all_reduce of {} floats between workers", count), [&] {
    return coll().all_reduce(comm_, data, data, count, DLRT_F32, DLRT_REDUCE_SUM, nullptr);
  });
}

void WorkerGroup::broadcast(void* data, size_t bytes) {
  if (comm_ == nullptr) fail(DLRT_FAILED_PRECONDITION, "the workers' communicator was aborted");
  plugin_call(fmt::format("broadcast of {} bytes from worker 0", bytes),
              [&] { return coll().broadcast(comm_, data, data, bytes, DLRT_U8, 0, nullptr); });
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
