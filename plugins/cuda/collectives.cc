// collectives.cc: the optional collectives table, over NCCL.
//
// One dlrt_comm is one NCCL rank on one GPU. How ranks meet (docs/design.md section 7): one rank
// calls comm_id_create (ncclGetUniqueId), the host ships the 128 bytes to every other rank
// (over MPI between hosts), and every rank calls comm_create with them.
//
// Never a hang: communicators are created NON-BLOCKING (ncclConfig_t.blocking = 0). NCCL
// calls then return at once, possibly with ncclInProgress, and we poll
// ncclCommGetAsyncError until the work is done, fails, or the caller's timeout passes; on a
// timeout in comm_create the half-made communicator is aborted (ncclCommAbort) and the
// answer is DEADLINE_EXCEEDED. Collectives use the timeout their communicator was created
// with for the same polling (NCCL may still be connecting peers lazily); once enqueued, a
// collective whose peer died shows up later as an error or a hang of stream_synchronize,
// which the host bounds itself and answers with comm_abort.
//
// Groups: group_begin/group_end bracket ncclGroupStart/End. Inside a group NCCL defers the
// work (communicator initialisation included) to the outermost group end, so comm_create and
// the collectives do not wait there; group_end waits for every communicator the group used.
// Group state is per host thread, as NCCL's is.
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cuda_plugin.hpp"

static_assert(sizeof(ncclUniqueId) == DLRT_COMM_ID_BYTES,
              "dlrt's communicator id must hold exactly one ncclUniqueId");

struct dlrt_comm {
  dlrt_device* device = nullptr;
  ncclComm_t comm = nullptr;  // null once aborted
  int32_t nranks = 0;
  int32_t rank = 0;
  int64_t timeout_ms = 0;  // <= 0: no deadline
  std::string label;       // "rank 0 of 2 on GPU:0"
};

namespace dlrt::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// What the calling thread's open group has touched (NCCL groups are per thread).
struct GroupState {
  int depth = 0;
  struct Entry {
    dlrt_comm* comm;
    bool created;  // created inside the group: abort it if its initialisation fails
  };
  std::vector<Entry> touched;
};
thread_local GroupState t_group;

void remember(dlrt_comm* comm, bool created) {
  for (auto& e : t_group.touched)
    if (e.comm == comm) {
      e.created = e.created || created;
      return;
    }
  t_group.touched.push_back({comm, created});
}

std::string nccl_detail(dlrt_comm* comm, ncclResult_t r) {
  std::string s = ncclGetErrorString(r);
  const char* last = ncclGetLastError(comm->comm);
  if (last != nullptr && last[0] != '\0') s += std::string(" (") + last + ")";
  return s;
}

// Poll until `comm` has no work in progress. Throws the NCCL error it reports, or
// DEADLINE_EXCEEDED naming `what` once `timeout_ms` (<= 0: none) has passed.
void wait_ready(dlrt_comm* comm, const std::string& what, int64_t timeout_ms) {
  const auto start = Clock::now();
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm->comm, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress)
      plugin::fail(code_for_nccl(state),
                   "cuda: " + what + " (" + comm->label + ") failed: " + nccl_detail(comm, state));
    if (timeout_ms > 0 && Clock::now() - start > std::chrono::milliseconds(timeout_ms))
      plugin::fail(DLRT_DEADLINE_EXCEEDED,
                   "cuda: " + what + " (" + comm->label + ") did not complete within " +
                       std::to_string(timeout_ms) + " ms: a peer rank is missing, slow or dead");
    // Spin briefly (most waits are short), then back off to sleeping.
    if (polls < 1000) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The result of an NCCL call on a non-blocking communicator. Inside a group NCCL only queues
// the call and answers ncclSuccess; the work starts at the outermost ncclGroupEnd, which on a
// non-blocking communicator answers ncclInProgress while a background thread launches it.
// So every communicator called inside a group is remembered whatever the call answered, and
// group_end waits on each: until then NCCL's kernel may not be on the stream yet (the host's
// next copies would read unreduced data) and the next call on the communicator fails with
// "Attempt to use communicator before the previous operation returned ncclSuccess".
void settle(dlrt_comm* comm, ncclResult_t r, const char* call, const std::string& what) {
  if (r != ncclSuccess && r != ncclInProgress)
    plugin::fail(code_for_nccl(r), "cuda: " + what + " (" + comm->label + "): " + call +
                                       " failed: " + nccl_detail(comm, r));
  if (t_group.depth > 0) {
    remember(comm, false);  // group_end waits, whether r was ncclSuccess or ncclInProgress
    return;
  }
  if (r == ncclInProgress) wait_ready(comm, what, comm->timeout_ms);
}

void abort_comm(dlrt_comm* comm) {
  if (comm->comm == nullptr) return;
  ncclResult_t r = ncclCommAbort(comm->comm);
  comm->comm = nullptr;
  if (r != ncclSuccess && r != ncclInProgress)
    plugin::log(DLRT_LOG_WARNING,
                "cuda: ncclCommAbort (" + comm->label + "): " + ncclGetErrorString(r));
}

dlrt_comm* live(dlrt_comm* comm, const char* entry) {
  plugin::require(comm, "comm");
  if (comm->comm == nullptr)
    plugin::fail(DLRT_FAILED_PRECONDITION, std::string("cuda: ") + entry + ": communicator " +
                                               comm->label + " was aborted; create a new one");
  return comm;
}

const char* dtype_name(int32_t dtype) {
  const char* name = dlrt_dtype_name(dtype);
  return name != nullptr ? name : "an unknown dtype";
}

ncclDataType_t nccl_dtype(int32_t dtype, const char* entry) {
  switch (dtype) {
    case DLRT_F32:
      return ncclFloat32;
    case DLRT_F16:
      return ncclFloat16;
    case DLRT_BF16:
      return ncclBfloat16;
    case DLRT_F64:
      return ncclFloat64;
    case DLRT_I32:
      return ncclInt32;
    case DLRT_I64:
      return ncclInt64;
    case DLRT_U8:
      return ncclUint8;
    case DLRT_I8:
      return ncclInt8;
    case DLRT_BOOL:
      return ncclUint8;  // one byte, 0 or 1
    case DLRT_U32:
      return ncclUint32;
    case DLRT_U64:
      return ncclUint64;
    default:  // u16, i16: NCCL has no 16-bit integer type
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   std::string("cuda: ") + entry + ": dtype " + dtype_name(dtype) + " (" +
                       std::to_string(dtype) + ") is not one NCCL carries (F32, F16, BF16, F64, I32, I64, U8, I8, U32, "
                       "U64, BOOL)");
  }
}

ncclRedOp_t nccl_op(int32_t op, int32_t dtype) {
  const char* name = nullptr;
  ncclRedOp_t r = ncclSum;
  switch (op) {
    case DLRT_REDUCE_SUM:
      name = "SUM";
      r = ncclSum;
      break;
    case DLRT_REDUCE_PROD:
      name = "PROD";
      r = ncclProd;
      break;
    case DLRT_REDUCE_MAX:
      name = "MAX";
      r = ncclMax;
      break;
    case DLRT_REDUCE_MIN:
      name = "MIN";
      r = ncclMin;
      break;
    case DLRT_REDUCE_AVG:
      name = "AVG";
      r = ncclAvg;
      break;
    default:
      plugin::fail(DLRT_INVALID_ARGUMENT,
                   "cuda: all_reduce: reduce op " + std::to_string(op) +
                       " is not one of SUM(0), PROD(1), MAX(2), MIN(3), AVG(4)");
  }
  // Summing or averaging 0/1 bytes would leave BOOL's domain; MAX and MIN are OR and AND.
  if (dtype == DLRT_BOOL && op != DLRT_REDUCE_MAX && op != DLRT_REDUCE_MIN)
    plugin::fail(DLRT_INVALID_ARGUMENT, std::string("cuda: all_reduce: reduce op ") + name +
                                            " is not defined on BOOL (MAX = or, MIN = and)");
  return r;
}

void check_stream(dlrt_comm* comm, dlrt_stream* stream, const char* entry) {
  plugin::require(stream, "stream");
  check_same_device(comm->device, stream, entry);
}

// ---- the table's entries ----

dlrt_status* comm_id_create(dlrt_plugin* plugin, uint8_t out_id[DLRT_COMM_ID_BYTES]) noexcept {
  return plugin::guard([&] {
    plugin::require(plugin, "plugin");
    plugin::require(out_id, "out_id");
    ncclUniqueId id;
    // Starts NCCL's bootstrap listener on this host; needs no GPU.
    NCCL_CHECK(ncclGetUniqueId(&id));
    std::memcpy(out_id, id.internal, DLRT_COMM_ID_BYTES);
  });
}

dlrt_status* comm_create(dlrt_device* device, const uint8_t id[DLRT_COMM_ID_BYTES], int32_t nranks,
                         int32_t rank, int64_t timeout_ms, dlrt_comm** out_comm) noexcept {
  return plugin::guard([&] {
    plugin::require(out_comm, "out_comm");
    *out_comm = nullptr;
    plugin::require(device, "device");
    plugin::require(id, "id");
    if (nranks < 1 || rank < 0 || rank >= nranks)
      plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: comm_create: rank " + std::to_string(rank) +
                                              " of " + std::to_string(nranks) +
                                              ", expected nranks >= 1 and 0 <= rank < nranks");
    set_device(device->ordinal);  // NCCL binds the communicator to the current device
    auto c = std::make_unique<dlrt_comm>();
    c->device = device;
    c->nranks = nranks;
    c->rank = rank;
    c->timeout_ms = timeout_ms;
    c->label =
        "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " on " + device->label;

    ncclUniqueId uid;
    std::memcpy(uid.internal, id, DLRT_COMM_ID_BYTES);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&c->comm, nranks, uid, rank, &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      std::string detail = c->comm != nullptr ? nccl_detail(c.get(), r) : ncclGetErrorString(r);
      abort_comm(c.get());
      plugin::fail(code_for_nccl(r), "cuda: comm_create (" + c->label +
                                         "): ncclCommInitRankConfig failed: " + detail);
    }
    if (t_group.depth > 0) {  // initialised at the outermost group_end, which waits
      remember(c.get(), true);
      *out_comm = c.release();
      return;
    }
    try {
      wait_ready(c.get(), "comm_create", timeout_ms);
    } catch (const plugin::Error& e) {
      abort_comm(c.get());
      throw plugin::Error(e.code(), std::string(e.what()) + "; the communicator was aborted");
    }
    *out_comm = c.release();
  });
}

dlrt_status* group_begin(dlrt_plugin* plugin) noexcept {
  return plugin::guard([&] {
    plugin::require(plugin, "plugin");
    NCCL_CHECK(ncclGroupStart());
    ++t_group.depth;
  });
}

dlrt_status* group_end(dlrt_plugin* plugin) noexcept {
  return plugin::guard([&] {
    plugin::require(plugin, "plugin");
    if (t_group.depth == 0)
      plugin::fail(DLRT_FAILED_PRECONDITION, "cuda: group_end without group_begin on this thread");
    --t_group.depth;
    ncclResult_t r = ncclGroupEnd();
    if (t_group.depth > 0) {  // an inner group: NCCL does the work at the outermost end
      if (r != ncclSuccess && r != ncclInProgress) NCCL_CHECK(r);
      return;
    }
    std::vector<GroupState::Entry> touched;
    touched.swap(t_group.touched);
    // Wait for every communicator of the group (ncclGroupEnd's own result is the first
    // failure, if any; each communicator reports its own below). The first error wins; the
    // communicators the group was creating are aborted when theirs failed.
    std::unique_ptr<plugin::Error> first;
    for (const auto& e : touched) {
      try {
        wait_ready(e.comm, e.created ? "comm_create (grouped)" : "group_end", e.comm->timeout_ms);
      } catch (const plugin::Error& err) {
        if (e.created) abort_comm(e.comm);
        if (!first) first = std::make_unique<plugin::Error>(err);
      }
    }
    if (first) throw *first;
    if (r != ncclSuccess && r != ncclInProgress) NCCL_CHECK(r);
  });
}

void comm_destroy(dlrt_comm* comm) noexcept {
  plugin::guard_void("comm_destroy", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    if (comm->comm == nullptr) return;  // already aborted
    set_device(comm->device->ordinal);
    // Finalize flushes outstanding work with the peers; Destroy then frees local state.
    // If the peers do not answer within the communicator's timeout, abort instead.
    try {
      const ncclResult_t r = ncclCommFinalize(comm->comm);
      if (r == ncclInProgress) wait_ready(comm, "comm_destroy", comm->timeout_ms);
      else if (r != ncclSuccess)
        plugin::fail(code_for_nccl(r), "cuda: comm_destroy (" + comm->label +
                                           "): ncclCommFinalize failed: " + nccl_detail(comm, r));
      NCCL_CHECK(ncclCommDestroy(comm->comm));
      comm->comm = nullptr;
    } catch (...) {
      abort_comm(comm);
      throw;
    }
  });
}

void comm_abort(dlrt_comm* comm) noexcept {
  plugin::guard_void("comm_abort", [&] {
    if (comm == nullptr) return;
    std::unique_ptr<dlrt_comm> owned(comm);
    if (comm->comm != nullptr) set_device(comm->device->ordinal);
    abort_comm(comm);
  });
}

dlrt_status* all_reduce(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        int32_t reduce_op, dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    live(comm, "all_reduce");
    check_stream(comm, stream, "all_reduce");
    const ncclDataType_t dt = nccl_dtype(dtype, "all_reduce");
    const ncclRedOp_t op = nccl_op(reduce_op, dtype);
    if (count == 0) return;
    plugin::require(send, "send");
    plugin::require(recv, "recv");
    set_device(comm->device->ordinal);
    settle(comm, ncclAllReduce(send, recv, count, dt, op, comm->comm, stream->stream),
           "ncclAllReduce",
           std::string("all_reduce of ") + std::to_string(count) + " " + dtype_name(dtype));
  });
}

dlrt_status* broadcast(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                       int32_t root, dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    live(comm, "broadcast");
    check_stream(comm, stream, "broadcast");
    const ncclDataType_t dt = nccl_dtype(dtype, "broadcast");
    if (root < 0 || root >= comm->nranks)
      plugin::fail(DLRT_INVALID_ARGUMENT, "cuda: broadcast: root " + std::to_string(root) +
                                              ", expected 0 <= root < " +
                                              std::to_string(comm->nranks));
    if (count == 0) return;
    if (comm->rank == root) plugin::require(send, "send (on the root)");
    plugin::require(recv, "recv");
    set_device(comm->device->ordinal);
    settle(comm, ncclBroadcast(send, recv, count, dt, root, comm->comm, stream->stream),
           "ncclBroadcast",
           std::string("broadcast of ") + std::to_string(count) + " " + dtype_name(dtype));
  });
}

dlrt_status* all_gather(dlrt_comm* comm, const void* send, void* recv, size_t count, int32_t dtype,
                        dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    live(comm, "all_gather");
    check_stream(comm, stream, "all_gather");
    const ncclDataType_t dt = nccl_dtype(dtype, "all_gather");
    if (count == 0) return;
    plugin::require(send, "send");
    plugin::require(recv, "recv");
    set_device(comm->device->ordinal);
    settle(comm, ncclAllGather(send, recv, count, dt, comm->comm, stream->stream), "ncclAllGather",
           std::string("all_gather of ") + std::to_string(count) + " " + dtype_name(dtype));
  });
}

}  // namespace

const dlrt_collective_api* collective_table() {
  static const dlrt_collective_api table = [] {
    dlrt_collective_api t{};
    t.struct_size = sizeof(dlrt_collective_api);
    t.comm_id_create = &comm_id_create;
    t.comm_create = &comm_create;
    t.group_begin = &group_begin;
    t.group_end = &group_end;
    t.comm_destroy = &comm_destroy;
    t.comm_abort = &comm_abort;
    t.all_reduce = &all_reduce;
    t.broadcast = &broadcast;
    t.all_gather = &all_gather;
    return t;
  }();
  return &table;
}

}  // namespace dlrt::cuda
