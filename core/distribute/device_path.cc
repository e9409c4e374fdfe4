// device_path.cc: see device_path.hpp.
#include "distribute/device_path.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <exception>

#include "context.hpp"
#include "distribute/worker_group.hpp"
#include "plugin_call.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace dlrt::core::distribute {
namespace {

// The entries this path calls, by name, for the message when one is missing. group_begin
// and group_end are optional (plugin.h: NULL means creates need no grouping).
const char* missing_entry(const dlrt_collective_api& c) {
#define DLRT_CHECK_ENTRY(f) \
  if (!DLRT_HAS_FIELD(dlrt_collective_api, f, c.struct_size) || c.f == nullptr) return #f;
  DLRT_CHECK_ENTRY(comm_id_create)
  DLRT_CHECK_ENTRY(comm_create)
  DLRT_CHECK_ENTRY(comm_destroy)
  DLRT_CHECK_ENTRY(comm_abort)
  DLRT_CHECK_ENTRY(all_reduce)
  DLRT_CHECK_ENTRY(broadcast)
#undef DLRT_CHECK_ENTRY
  return nullptr;
}

bool has_groups(const dlrt_collective_api& c) {
  return DLRT_HAS_FIELD(dlrt_collective_api, group_end, c.struct_size) &&
         c.group_begin != nullptr && c.group_end != nullptr;
}

}  // namespace

std::string DevicePath::unusable_reason(const Context& ctx, const std::vector<size_t>& devices) {
  const Plugin* first = nullptr;
  std::vector<size_t> physical_owner(ctx.registry().physical().size(), SIZE_MAX);
  for (size_t d : devices) {
    const Plugin& p = ctx.plugin_of(d);
    const dlrt_collective_api* c = p.api().collectives;
    if (c == nullptr)
      return fmt::format("{}'s plugin '{}' offers no collectives", ctx.device_name(d), p.name);
    if (const char* entry = missing_entry(*c))
      return fmt::format("{}'s plugin '{}' has a collectives table without {}", ctx.device_name(d),
                         p.name, entry);
    if (first == nullptr) first = &p;
    if (&p != first)
      return fmt::format(
          "the replicas are on plugins '{}' and '{}'; one communicator spans the "
          "devices of one plugin",
          first->name, p.name);
    size_t& owner = physical_owner.at(ctx.registry().devices().at(d).physical);
    if (owner != SIZE_MAX)
      return fmt::format(
          "{} and {} are logical devices of one physical device; a device "
          "communicator takes each physical device once",
          ctx.device_name(owner), ctx.device_name(d));
    owner = d;
  }
  return "";
}

DevicePath::DevicePath(Context& ctx, const std::vector<size_t>& devices, WorkerGroup* workers,
                       int64_t timeout_ms)
    : ctx_(ctx), workers_(workers), timeout_ms_(timeout_ms) {
  plugin_ = &ctx.plugin_of(devices.at(0));
  api_ = &plugin_->api();
  const int32_t nranks = static_cast<int32_t>(devices.size()) * (workers ? workers->size() : 1);
  try {
    for (size_t d : devices) {
      Replica r;
      r.device = d;
      r.handle = ctx.device_handle(d).second;
      plugin_call(fmt::format("{}: stream_create for the strategy", ctx.device_name(d)),
                  [&] { return api_->stream_create(r.handle, &r.stream); });
      replicas_.push_back(std::move(r));
    }
    // Rank 0 makes the id; the other workers receive it over MPI.
    uint8_t id[DLRT_COMM_ID_BYTES] = {};
    if (workers == nullptr || workers->rank() == 0)
      plugin_call(fmt::format("plugin '{}': comm_id_create", plugin_->name),
                  [&] { return coll().comm_id_create(plugin_->instance(), id); });
    if (workers != nullptr) workers->broadcast(id, sizeof id);
    grouped([&](size_t r) {
      Replica& rep = replicas_[r];
      plugin_call(fmt::format("{}: comm_create (rank {} of {})", ctx.device_name(rep.device),
                              global_rank(r), nranks),
                  [&] {
                    return coll().comm_create(rep.handle, id, nranks, global_rank(r), timeout_ms,
                                              &rep.comm);
                  });
    });
  } catch (...) {
    release(/*abort_comms=*/true);
    throw;
  }
}

DevicePath::~DevicePath() { release(/*abort_comms=*/false); }

int32_t DevicePath::global_rank(size_t replica) const {
  const int32_t worker = workers_ != nullptr ? workers_->rank() : 0;
  return worker * static_cast<int32_t>(replicas_.size()) + static_cast<int32_t>(replica);
}

void DevicePath::release(bool abort_comms) noexcept {
  // Work still queued must not outlive its buffers: synchronise first (errors are moot now).
  for (Replica& r : replicas_)
    if (r.stream != nullptr && !abort_comms)
      plugin_call_noexcept([&] { take_status(api_->stream_synchronize(r.stream)); });
  {
    std::lock_guard<std::mutex> lock(comms_mu_);
    for (Replica& r : replicas_) {
      if (r.comm == nullptr) continue;
      if (abort_comms) plugin_call_noexcept([&] { coll().comm_abort(r.comm); });
      else plugin_call_noexcept([&] { coll().comm_destroy(r.comm); });
      r.comm = nullptr;
    }
  }
  for (Replica& r : replicas_) {
    if (r.stream != nullptr) plugin_call_noexcept([&] { api_->stream_destroy(r.stream); });
    r.stream = nullptr;
    r.flat.reset();
  }
}

size_t DevicePath::abort() noexcept {
  std::lock_guard<std::mutex> lock(comms_mu_);
  size_t n = 0;
  for (Replica& r : replicas_) {
    if (r.comm == nullptr) continue;
    plugin_call_noexcept([&] { coll().comm_abort(r.comm); });
    r.comm = nullptr;
    ++n;
  }
  aborted_ += n;
  return n;
}

size_t DevicePath::aborted_count() const {
  std::lock_guard<std::mutex> lock(comms_mu_);
  return aborted_;
}

void DevicePath::grouped(const std::function<void(size_t)>& fn) {
  const bool groups = has_groups(coll());
  if (groups)
    plugin_call(fmt::format("plugin '{}': group_begin", plugin_->name),
                [&] { return coll().group_begin(plugin_->instance()); });
  std::exception_ptr error;
  try {
    for (size_t r = 0; r < replicas_.size(); ++r) fn(r);
  } catch (...) {
    error = std::current_exception();
  }
  if (groups) {
    try {
      plugin_call(fmt::format("plugin '{}': group_end", plugin_->name),
                  [&] { return coll().group_end(plugin_->instance()); });
    } catch (...) {
      if (error == nullptr) error = std::current_exception();
    }
  }
  if (error != nullptr) std::rethrow_exception(error);
}

void DevicePath::ensure_flat(size_t bytes) {
  for (Replica& r : replicas_) {
    if (r.flat.size() >= bytes) continue;
    r.flat.reset();  // the old one first: the arena may need its room
    r.flat = ctx_.arena(r.device).allocate(bytes, "the flat all-reduce buffer of a strategy");
  }
}

void DevicePath::pack(const Layout& layout, size_t r) {
  Replica& rep = replicas_[r];
  for (size_t k = 0; k < layout.per_replica; ++k) {
    unsigned char* dst = static_cast<unsigned char*>(rep.flat.data()) + layout.offsets[k];
    plugin_call(fmt::format("{}: packing tensor {} (memcpy_d2d)", ctx_.device_name(rep.device), k),
                [&] {
                  return api_->memcpy_d2d(rep.handle, dst, layout.at(r, k).data(), layout.bytes[k],
                                          rep.stream);
                });
  }
}

void DevicePath::unpack(const Layout& layout, size_t r) {
  Replica& rep = replicas_[r];
  for (size_t k = 0; k < layout.per_replica; ++k) {
    const unsigned char* src = static_cast<unsigned char*>(rep.flat.data()) + layout.offsets[k];
    plugin_call(
        fmt::format("{}: unpacking tensor {} (memcpy_d2d)", ctx_.device_name(rep.device), k), [&] {
          return api_->memcpy_d2d(rep.handle, layout.at(r, k).data(), src, layout.bytes[k],
                                  rep.stream);
        });
  }
}

void DevicePath::synchronize(const char* what) {
  const bool expired = watchdog_.run(
      timeout_ms_,
      [&] {
        for (Replica& r : replicas_)
          plugin_call(
              fmt::format("{}: stream_synchronize after {}", ctx_.device_name(r.device), what),
              [&] { return api_->stream_synchronize(r.stream); });
      },
      [&] { abort(); });
  if (expired)
    fail(DLRT_DEADLINE_EXCEEDED,
         fmt::format("{}: the devices' streams did not finish within {} ms (a peer rank is "
                     "missing, stuck or dead); the communicators were aborted",
                     what, timeout_ms_));
}

void DevicePath::all_reduce(const Layout& layout) {
  const bool in_place = layout.per_replica == 1;
  if (!in_place) ensure_flat(layout.total_bytes);
  auto buffer = [&](size_t r) {
    return in_place ? layout.at(r, 0).data() : replicas_[r].flat.data();
  };
  if (!in_place)
    for (size_t r = 0; r < replicas_.size(); ++r) pack(layout, r);
  grouped([&](size_t r) {
    Replica& rep = replicas_[r];
    plugin_call(fmt::format("{}: all_reduce of {} f32 (rank {})", ctx_.device_name(rep.device),
                            layout.total_elements, global_rank(r)),
                [&] {
                  return coll().all_reduce(rep.comm, buffer(r), buffer(r), layout.total_elements,
                                           DLRT_F32, DLRT_REDUCE_SUM, rep.stream);
                });
  });
  if (!in_place)
    for (size_t r = 0; r < replicas_.size(); ++r) unpack(layout, r);
  synchronize("all_reduce");
}

void DevicePath::broadcast(const Layout& layout) {
  const bool in_place = layout.per_replica == 1;
  const bool is_root_worker = workers_ == nullptr || workers_->rank() == 0;
  if (!in_place) ensure_flat(layout.total_bytes);
  auto buffer = [&](size_t r) {
    return in_place ? layout.at(r, 0).data() : replicas_[r].flat.data();
  };
  if (!in_place && is_root_worker) pack(layout, 0);  // global rank 0 is the root
  grouped([&](size_t r) {
    Replica& rep = replicas_[r];
    plugin_call(fmt::format("{}: broadcast of {} bytes (rank {})", ctx_.device_name(rep.device),
                            layout.total_bytes, global_rank(r)),
                [&] {
                  return coll().broadcast(rep.comm, buffer(r), buffer(r), layout.total_bytes,
                                          DLRT_U8, 0, rep.stream);
                });
  });
  if (!in_place)
    for (size_t r = is_root_worker ? 1 : 0; r < replicas_.size(); ++r) unpack(layout, r);
  synchronize("broadcast");
}

}  // namespace dlrt::core::distribute
