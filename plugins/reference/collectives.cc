// collectives.cc: the reference plugin's collectives table — an in-process TEST DOUBLE of
// NCCL, so the core's device-collectives path (core/distribute/device_path.cc) runs, and is
// tested, on a machine without GPUs.
//
// What it models, as NCCL does it:
//   - comm_id_create makes a random 128-byte id; communicators created with the same id are
//     the ranks of one group (a "clique"), found through a process-wide registry keyed by the
//     id's bytes — so ids mean something only inside this process;
//   - comm_create joins rank `rank` of `nranks` and waits (up to timeout_ms) until every rank
//     has joined; inside group_begin/group_end the wait moves to group_end, which is how one
//     thread creates several ranks;
//   - inside a group, all_reduce / broadcast / all_gather are queued, and group_end runs
//     them: the k-th call of every rank of a clique forms one collective. all_reduce folds
//     the ranks' buffers in rank order, acc = ((x0 + x1) + x2)..., in the element type,
//     so the sum has the bits the host path's replica-order sum has; every rank gets it.
//     Buffers are device memory, which for this plugin is host memory (memory.cc), checked
//     like every other device pointer;
//   - comm_abort makes the clique's other ranks fail (UNAVAILABLE), as a dead peer does.
//   - option collective_blocking=0: NCCL's non-blocking communicators (see "Non-blocking
//     mode" below): a group's work runs on a background thread after group_end was called,
//     and group_end waits for every communicator the group used.
// What it does not model: several processes, asynchrony on the stream (work runs inside
// group_end or its background thread, not on the stream later; the stream is only
// checked), and a rendezvous of collectives between
// threads: outside a group a communicator of nranks > 1 answers FAILED_PRECONDITION (one
// thread cannot play every rank of a blocking collective).
//
// Fault injection, option collective_fault=<kind>:<n> (plugin.cc): the n-th collective call
// (all_reduce, broadcast or all_gather, counted from 1 over the plugin instance) fails —
// kind "timeout": after waiting the communicator's timeout_ms, DEADLINE_EXCEEDED naming the
// rank awaited; kind "unavailable": at once, UNAVAILABLE naming a failed peer. The core's
// broken-strategy handling is tested with it.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "reference.hpp"

namespace dlrt::reference {
namespace {

using Id = std::array<uint8_t, DLRT_COMM_ID_BYTES>;

// The ranks joined under one id. Guarded by g_mu.
struct Clique {
  int32_t nranks = 0;
  std::vector<dlrt_comm*> members;  // by rank; NULL until that rank joins
  std::string failed;               // non-empty once a rank was aborted: later calls fail
  bool complete() const {
    for (dlrt_comm* m : members)
      if (m == nullptr) return false;
    return true;
  }
};

std::mutex g_mu;
std::condition_variable g_joined;  // notified whenever a rank joins
std::map<Id, std::shared_ptr<Clique>>& registry() {
  static std::map<Id, std::shared_ptr<Clique>> r;
  return r;
}

}  // namespace
}  // namespace dlrt::reference

// One rank of a clique, on one reference device.
struct dlrt_comm {
  dlrt_device* device = nullptr;
  std::shared_ptr<dlrt::reference::Clique> clique;
  dlrt::reference::Id id{};
  int32_t nranks = 0;
  int32_t rank = 0;
  int64_t timeout_ms = 0;  // <= 0: no deadline
  bool joined = false;     // false once it left the clique (a failed join, abort)
  // Non-blocking mode: the background work of the last group that used this communicator,
  // ready once that work is done (its value: the failure message, "" on success).
  std::shared_future<std::string> in_flight;
  std::string label;  // "rank 0 of 2 on REF:0"
};

namespace dlrt::reference {
namespace {

using plugin::fail;
using plugin::guard;

// One queued collective call.
struct Call {
  enum Kind { kAllReduce, kBroadcast, kAllGather } kind;
  dlrt_comm* comm;
  const void* send;
  void* recv;
  size_t count;
  int32_t dtype;
  int32_t reduce_op;  // all_reduce
  int32_t root;       // broadcast
};

const char* kind_name(Call::Kind k) {
  return k == Call::kAllReduce ? "all_reduce" : k == Call::kBroadcast ? "broadcast" : "all_gather";
}

// The calling thread's open group (NCCL's groups are per thread too).
struct Group {
  int depth = 0;
  std::vector<dlrt_comm*> created;  // joined inside the group: group_end waits for them
  std::vector<Call> calls;
  bool failed = false;  // a call of this group failed when it was made
};

// Non-blocking mode (option collective_blocking=0): NCCL's behaviour on a non-blocking
// communicator. Inside a group every call answers success at once; the group's end hands
// the work to a background thread (NCCL: ncclGroupEnd returns ncclInProgress while its
// thread launches the kernels), and until that work is done the communicator is busy: a
// call on it fails as NCCL's does ("Attempt to use communicator before the previous
// operation returned ncclSuccess"). group_end must therefore wait for every communicator
// the group used — created in it or called in it, whatever the call answered — polling
// each under its timeout, which is what the cuda plugin's group_end does with
// ncclCommGetAsyncError. The delay makes "not waited for" observable.
constexpr auto kBackgroundDelay = std::chrono::milliseconds(20);

bool busy(const dlrt_comm* c) {
  return c->in_flight.valid() &&
         c->in_flight.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}
thread_local Group t_group;

std::string peer_of(const dlrt_comm* c) {
  return "rank " + std::to_string(c->nranks > 1 ? (c->rank + 1) % c->nranks : c->rank) + " of " +
         std::to_string(c->nranks);
}

// Leaves the clique (and the registry, once empty). g_mu held.
void leave(dlrt_comm* c, const std::string& why_failed) {
  if (!c->joined) return;
  c->joined = false;
  c->clique->members[c->rank] = nullptr;
  if (!why_failed.empty() && c->clique->failed.empty()) c->clique->failed = why_failed;
  bool empty = true;
  for (dlrt_comm* m : c->clique->members) empty = empty && m == nullptr;
  auto it = registry().find(c->id);
  if (empty && it != registry().end() && it->second == c->clique) registry().erase(it);
}

// Waits until `c`'s clique is complete, or its timeout; DEADLINE_EXCEEDED naming the ranks
// missing (and `c` leaves). g_mu held through `lock`.
void wait_joined(dlrt_comm* c, std::unique_lock<std::mutex>& lock, const char* entry) {
  auto done = [&] { return c->clique->complete(); };
  if (c->timeout_ms <= 0) {
    g_joined.wait(lock, done);
    return;
  }
  if (g_joined.wait_for(lock, std::chrono::milliseconds(c->timeout_ms), done)) return;
  std::string missing;
  for (int32_t r = 0; r < c->nranks; ++r)
    if (c->clique->members[r] == nullptr)
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  leave(c, "");
  fail(DLRT_DEADLINE_EXCEEDED, prefix() + entry + " (" + c->label + "): rank(s) " + missing +
                                   " of " + std::to_string(c->nranks) + " did not join within " +
                                   std::to_string(c->timeout_ms) +
                                   " ms (this double's ranks meet only inside one process)");
}

dlrt_comm* live(dlrt_comm* comm, const char* entry) {
  plugin::require(comm, "comm");
  std::lock_guard<std::mutex> lock(g_mu);
  if (!comm->joined)
    fail(DLRT_FAILED_PRECONDITION, prefix() + entry + ": communicator " + comm->label +
                                       " is not usable (its join failed or it was aborted)");
  if (!comm->clique->failed.empty())
    fail(DLRT_UNAVAILABLE, prefix() + entry + " (" + comm->label + "): " + comm->clique->failed);
  return comm;
}

// The n-th collective call of the plugin instance fails if option collective_fault says so.
void maybe_inject_fault(dlrt_comm* c, const char* entry) {
  const CollectiveFault& f = c->device->plugin->config.collective_fault;
  const int64_t n = ++c->device->plugin->collective_calls;
  if (f.kind.empty() || n != f.at) return;
  const std::string why =
      " (injected fault collective_fault=" + f.kind + ":" + std::to_string(f.at) + ")";
  if (f.kind == "timeout") {
    if (c->timeout_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(c->timeout_ms));
    fail(DLRT_DEADLINE_EXCEEDED, prefix() + entry + " (" + c->label + "): " + peer_of(c) +
                                     " did not answer within " + std::to_string(c->timeout_ms) +
                                     " ms" + why);
  }
  fail(DLRT_UNAVAILABLE,
       prefix() + entry + " (" + c->label + "): peer " + peer_of(c) + " failed" + why);
}

template <typename T>
void fold(T* acc, const T* in, size_t n, int32_t op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case DLRT_REDUCE_SUM:
      case DLRT_REDUCE_AVG:
        acc[i] = acc[i] + in[i];
        break;
      case DLRT_REDUCE_PROD:
        acc[i] = acc[i] * in[i];
        break;
      case DLRT_REDUCE_MAX:
        acc[i] = in[i] > acc[i] ? in[i] : acc[i];
        break;
      case DLRT_REDUCE_MIN:
        acc[i] = in[i] < acc[i] ? in[i] : acc[i];
        break;
    }
  }
}

template <typename T>
void reduce_all(const std::vector<const Call*>& ranks, std::vector<unsigned char>& out) {
  const size_t n = ranks[0]->count;
  out.assign(static_cast<const unsigned char*>(ranks[0]->send),
             static_cast<const unsigned char*>(ranks[0]->send) + n * sizeof(T));
  T* acc = reinterpret_cast<T*>(out.data());
  for (size_t r = 1; r < ranks.size(); ++r)
    fold(acc, static_cast<const T*>(ranks[r]->send), n, ranks[r]->reduce_op);
  if (ranks[0]->reduce_op == DLRT_REDUCE_AVG)
    for (size_t i = 0; i < n; ++i) acc[i] = acc[i] / static_cast<T>(ranks.size());
}

// Checks one call when it is made (pointers, dtype, op, root) and returns its byte count.
size_t check_call(const Call& c, dlrt_stream* stream) {
  const char* entry = kind_name(c.kind);
  check_stream_device(stream, c.comm->device, entry);
  const size_t elem = plugin::dtype_size(c.dtype);
  if (elem == 0 || (c.kind == Call::kAllReduce && c.dtype != DLRT_F32 && c.dtype != DLRT_F64 &&
                    c.dtype != DLRT_I32 && c.dtype != DLRT_I64))
    fail(DLRT_INVALID_ARGUMENT,
         prefix() + entry + ": dtype " + std::to_string(c.dtype) +
             " is not one the reference double " +
             (c.kind == Call::kAllReduce ? "reduces (F32, F64, I32, I64)" : "knows"));
  if (c.kind == Call::kAllReduce &&
      (c.reduce_op < DLRT_REDUCE_SUM || c.reduce_op > DLRT_REDUCE_AVG ||
       (c.reduce_op == DLRT_REDUCE_AVG && c.dtype != DLRT_F32 && c.dtype != DLRT_F64)))
    fail(DLRT_INVALID_ARGUMENT, prefix() + "all_reduce: reduce op " + std::to_string(c.reduce_op) +
                                    " is not SUM, PROD, MAX, MIN, or AVG of a float type");
  if (c.kind == Call::kBroadcast && (c.root < 0 || c.root >= c.comm->nranks))
    fail(DLRT_INVALID_ARGUMENT, prefix() + "broadcast: root " + std::to_string(c.root) +
                                    ", expected 0 <= root < " + std::to_string(c.comm->nranks));
  const size_t bytes = c.count * elem;
  Device& dev = *c.comm->device->dev;
  const std::string send_what = std::string(entry) + " send",
                    recv_what = std::string(entry) + " recv";
  if (c.kind != Call::kBroadcast || c.comm->rank == c.root)
    check_device_range(dev, c.send, bytes, send_what.c_str());
  check_device_range(dev, c.recv, c.kind == Call::kAllGather ? bytes * c.comm->nranks : bytes,
                     recv_what.c_str());
  return bytes;
}

// Runs one collective: `ranks[r]` is rank r's call, all of one kind, count, dtype and op.
void execute(const std::vector<const Call*>& ranks) {
  const Call& c0 = *ranks[0];
  const size_t elem = plugin::dtype_size(c0.dtype), bytes = c0.count * elem;
  for (const Call* c : ranks)
    if (c->kind != c0.kind || c->count != c0.count || c->dtype != c0.dtype ||
        c->reduce_op != c0.reduce_op || c->root != c0.root)
      fail(DLRT_INVALID_ARGUMENT, prefix() + kind_name(c0.kind) + " (" + c->comm->label +
                                      "): the ranks' calls differ (kind, count, dtype, op or "
                                      "root) from rank 0's");
  // The result is built apart first: send and recv may be the same buffer (in place).
  std::vector<unsigned char> out;
  switch (c0.kind) {
    case Call::kAllReduce:
      if (c0.dtype == DLRT_F32) reduce_all<float>(ranks, out);
      if (c0.dtype == DLRT_F64) reduce_all<double>(ranks, out);
      if (c0.dtype == DLRT_I32) reduce_all<int32_t>(ranks, out);
      if (c0.dtype == DLRT_I64) reduce_all<int64_t>(ranks, out);
      break;
    case Call::kBroadcast: {
      const auto* src = static_cast<const unsigned char*>(ranks[c0.root]->send);
      out.assign(src, src + bytes);
      break;
    }
    case Call::kAllGather:
      for (const Call* c : ranks) {
        const auto* src = static_cast<const unsigned char*>(c->send);
        out.insert(out.end(), src, src + bytes);
      }
      break;
  }
  for (const Call* c : ranks)
    if (!out.empty()) std::memcpy(c->recv, out.data(), out.size());
}

// Runs every queued call: per clique, the k-th call of each rank forms one collective.
void run_calls(const std::vector<Call>& calls) {
  std::map<Clique*, std::vector<std::vector<const Call*>>> by_clique;  // [rank][k]
  for (const Call& c : calls) {
    auto& per_rank = by_clique[c.comm->clique.get()];
    per_rank.resize(c.comm->nranks);
    per_rank[c.comm->rank].push_back(&c);
  }
  for (auto& [clique, per_rank] : by_clique) {
    const size_t k_max = per_rank[0].size();
    for (size_t r = 0; r < per_rank.size(); ++r)
      if (per_rank[r].size() != k_max) {
        const Call& any = *(per_rank[r].empty() ? per_rank[0][0] : per_rank[r][0]);
        fail(DLRT_FAILED_PRECONDITION,
             prefix() + "group_end: " + kind_name(any.kind) + " on a communicator of " +
                 std::to_string(per_rank.size()) + " ranks was called " +
                 std::to_string(per_rank[r].size()) + " time(s) by rank " + std::to_string(r) +
                 " and " + std::to_string(k_max) +
                 " by rank 0; the reference double runs a "
                 "collective when every rank of its communicator calls it in one group on one "
                 "thread");
      }
    for (size_t k = 0; k < k_max; ++k) {
      std::vector<const Call*> ranks;
      for (auto& calls_of_rank : per_rank) ranks.push_back(calls_of_rank[k]);
      execute(ranks);
    }
  }
}

// The common body of the three collectives.
dlrt_status* collective(Call call, dlrt_stream* stream) {
  return guard([&] {
    const char* entry = kind_name(call.kind);
    live(call.comm, entry);
    if (busy(call.comm))
      fail(DLRT_INVALID_ARGUMENT,
           prefix() + entry + " (" + call.comm->label +
               "): Attempt to "
               "use communicator before the previous operation returned ncclSuccess (the "
               "double's non-blocking mode: the last group's work is still in flight)");
    check_call(call, stream);
    try {
      maybe_inject_fault(call.comm, entry);
    } catch (...) {
      if (t_group.depth > 0) t_group.failed = true;
      throw;
    }
    if (call.count == 0) return;
    if (t_group.depth > 0) {
      t_group.calls.push_back(call);
      return;
    }
    if (call.comm->nranks > 1)
      fail(DLRT_FAILED_PRECONDITION,
           prefix() + entry + " (" + call.comm->label +
               "): outside group_begin/group_end a "
               "communicator of more than one rank would block until the other ranks call from "
               "their threads, which the reference double does not model; call every rank "
               "inside one group on this thread");
    execute({&call});
  });
}

// ---- the table's entries ----

dlrt_status* comm_id_create(dlrt_plugin* plugin, uint8_t out_id[DLRT_COMM_ID_BYTES]) {
  return guard([&] {
    plugin::require(plugin, "plugin");
    plugin::require(out_id, "out_id");
    static std::mutex mu;
    static std::mt19937_64 gen{std::random_device{}()};
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < DLRT_COMM_ID_BYTES; i += 8) {
      const uint64_t v = gen();
      std::memcpy(out_id + i, &v, 8);
    }
  });
}

dlrt_status* comm_create(dlrt_device* device, const uint8_t id[DLRT_COMM_ID_BYTES], int32_t nranks,
                         int32_t rank, int64_t timeout_ms, dlrt_comm** out_comm) {
  if (out_comm != nullptr) *out_comm = nullptr;
  return guard([&] {
    plugin::require(out_comm, "out_comm");
    plugin::require(id, "id");
    if (device == nullptr)
      fail(DLRT_UNIMPLEMENTED, prefix() +
                                   "comm_create: no host-memory communicators (device "
                                   "NULL); the mpi plugin makes those");
    if (nranks < 1 || rank < 0 || rank >= nranks)
      fail(DLRT_INVALID_ARGUMENT, prefix() + "comm_create: rank " + std::to_string(rank) + " of " +
                                      std::to_string(nranks) +
                                      ", expected nranks >= 1 and 0 <= rank < nranks");
    auto c = std::make_unique<dlrt_comm>();
    c->device = device;
    std::memcpy(c->id.data(), id, DLRT_COMM_ID_BYTES);
    c->nranks = nranks;
    c->rank = rank;
    c->timeout_ms = timeout_ms;
    c->label = "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " on " +
               device->dev->label;

    std::unique_lock<std::mutex> lock(g_mu);
    std::shared_ptr<Clique>& clique = registry()[c->id];
    if (!clique) {
      clique = std::make_shared<Clique>();
      clique->nranks = nranks;
      clique->members.assign(nranks, nullptr);
    }
    if (clique->nranks != nranks)
      fail(DLRT_INVALID_ARGUMENT, prefix() + "comm_create (" + c->label +
                                      "): this id's "
                                      "communicator has " +
                                      std::to_string(clique->nranks) + " ranks");
    if (clique->members[rank] != nullptr)
      fail(DLRT_INVALID_ARGUMENT, prefix() + "comm_create (" + c->label + "): rank " +
                                      std::to_string(rank) + " has joined this id already");
    c->clique = clique;
    clique->members[rank] = c.get();
    c->joined = true;
    g_joined.notify_all();
    if (t_group.depth > 0) {
      t_group.created.push_back(c.get());  // group_end waits for the other ranks
    } else {
      wait_joined(c.get(), lock, "comm_create");
    }
    *out_comm = c.release();
  });
}

dlrt_status* group_begin(dlrt_plugin* plugin) {
  return guard([&] {
    plugin::require(plugin, "plugin");
    ++t_group.depth;
  });
}

dlrt_status* group_end(dlrt_plugin* plugin) {
  return guard([&] {
    plugin::require(plugin, "plugin");
    if (t_group.depth == 0)
      fail(DLRT_FAILED_PRECONDITION, prefix() + "group_end without group_begin on this thread");
    if (--t_group.depth > 0) return;  // an inner group: the outermost end does the work
    Group g;
    std::swap(g, t_group);  // the thread's group is closed whatever happens below
    {
      std::unique_lock<std::mutex> lock(g_mu);
      for (dlrt_comm* c : g.created)
        if (c->joined) wait_joined(c, lock, "group_end (comm_create)");
    }
    if (g.failed)
      fail(DLRT_FAILED_PRECONDITION, prefix() +
                                         "group_end: a call of this group failed; its "
                                         "other calls were not run");
    if (plugin->config.collective_blocking || g.calls.empty()) {
      run_calls(g.calls);
      return;
    }
    // Non-blocking: the work runs on a background thread; every communicator the group
    // used is busy until it is done, and group_end waits for each under its timeout.
    std::vector<dlrt_comm*> used;
    for (const Call& c : g.calls)
      if (std::find(used.begin(), used.end(), c.comm) == used.end()) used.push_back(c.comm);
    std::shared_future<std::string> work =
        std::async(std::launch::async, [calls = std::move(g.calls)] {
          std::this_thread::sleep_for(kBackgroundDelay);
          try {
            run_calls(calls);
            return std::string();
          } catch (const plugin::Error& e) {
            return std::string(e.what());
          }
        }).share();
    for (dlrt_comm* c : used) c->in_flight = work;
    for (dlrt_comm* c : used) {
      if (c->timeout_ms > 0 &&
          work.wait_for(std::chrono::milliseconds(c->timeout_ms)) != std::future_status::ready)
        fail(DLRT_DEADLINE_EXCEEDED, prefix() + "group_end (" + c->label +
                                         "): the group's "
                                         "collectives did not complete within " +
                                         std::to_string(c->timeout_ms) + " ms");
      const std::string& error = work.get();
      if (!error.empty()) fail(DLRT_INTERNAL, prefix() + "group_end (" + c->label + "): " + error);
    }
  });
}

void comm_destroy(dlrt_comm* comm) {
  plugin::guard_void("comm_destroy", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    std::lock_guard<std::mutex> lock(g_mu);
    leave(comm, "");
  });
}

void comm_abort(dlrt_comm* comm) {
  plugin::guard_void("comm_abort", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    plugin::log(DLRT_LOG_INFO, "comm_abort: " + comm->label);
    std::lock_guard<std::mutex> lock(g_mu);
    leave(comm, comm->label + " was aborted");
  });
}

dlrt_status* all_reduce(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        int32_t reduce_op, dlrt_stream* stream) {
  return collective({Call::kAllReduce, comm, send, recv, count, dtype, reduce_op, 0}, stream);
}

dlrt_status* broadcast(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                       int32_t root, dlrt_stream* stream) {
  return collective({Call::kBroadcast, comm, send, recv, count, dtype, DLRT_REDUCE_SUM, root},
                    stream);
}

dlrt_status* all_gather(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        dlrt_stream* stream) {
  return collective({Call::kAllGather, comm, send, recv, count, dtype, DLRT_REDUCE_SUM, 0}, stream);
}

}  // namespace

CollectiveFault parse_collective_fault(const std::string& text) {
  CollectiveFault f;
  if (text.empty()) return f;
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const std::string n = colon == std::string::npos ? "" : text.substr(colon + 1);
  char* end = nullptr;
  const long long at = n.empty() ? 0 : std::strtoll(n.c_str(), &end, 10);
  if ((kind != "timeout" && kind != "unavailable") || n.empty() || *end != '\0' || at < 1)
    fail(DLRT_INVALID_ARGUMENT, prefix() + "option 'collective_fault' is '" + text +
                                    "', expected <timeout|unavailable>:<n>, n >= 1 (the n-th "
                                    "collective call fails)");
  f.kind = kind;
  f.at = at;
  return f;
}

const dlrt_collective_api* collective_table() {
  static const dlrt_collective_api table = {
      .struct_size = sizeof(dlrt_collective_api),
      .comm_id_create = comm_id_create,
      .comm_create = comm_create,
      .group_begin = group_begin,
      .group_end = group_end,
      .comm_destroy = comm_destroy,
      .comm_abort = comm_abort,
      .all_reduce = all_reduce,
      .broadcast = broadcast,
      .all_gather = all_gather,
  };
  return &table;
}

}  // namespace dlrt::reference
