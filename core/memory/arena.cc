// arena.cc: see arena.hpp. Two ways to serve a request, chosen once per arena:
//
//   growth on   cache hit (a freed block of the same rounded size) or the plugin's mem_alloc;
//               a freed block goes to the cache while it holds under kArenaCacheBytes, else
//               back to the plugin. The plugin is called outside the mutex.
//   growth off  one mem_alloc of the whole reservation at the first request, then best-fit
//               over its free ranges (split on allocate, merged with both neighbours on free),
//               all under the mutex; the reservation goes back when the arena is destroyed.
//
// Either way the limit check comes first and is made on in_use (bytes asked for), so the
// error a caller sees names what it asked and what the device holds.
#include "memory/arena.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "log.hpp"
#include "plugin_call.hpp"
#include "status.hpp"

namespace dlrt::core {

namespace {

size_t round_up(size_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{} bytes ({:.2f} {})", bytes, v, kUnits[u]);
}

// ---- Buffer -------------------------------------------------------------------------------

Buffer::Buffer(Buffer&& other) noexcept
    : arena_(std::exchange(other.arena_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    reset();
    arena_ = std::exchange(other.arena_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

void Buffer::reset() {
  if (data_ != nullptr && arena_ != nullptr) arena_->release(data_, size_);
  arena_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

// ---- the pool (growth off) ----------------------------------------------------------------

// Free ranges of the reservation, indexed both ways: by offset (to merge neighbours) and by
// (size, offset) (best fit: the smallest range that holds the request, lowest offset first).
struct DeviceArena::Pool {
  void* base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> by_offset;           // offset -> size
  std::set<std::pair<size_t, size_t>> by_size;  // (size, offset)

  void add_free(size_t offset, size_t size) {
    by_offset.emplace(offset, size);
    by_size.emplace(size, offset);
  }
  void remove_free(std::map<size_t, size_t>::iterator it) {
    by_size.erase({it->second, it->first});
    by_offset.erase(it);
  }
  size_t largest_free() const { return by_size.empty() ? 0 : by_size.rbegin()->first; }

  // Offset of a best-fit range of `rounded` bytes, or nullopt-like SIZE_MAX.
  size_t take(size_t rounded) {
    auto fit = by_size.lower_bound({rounded, 0});
    if (fit == by_size.end()) return SIZE_MAX;
    const auto [size, offset] = *fit;
    remove_free(by_offset.find(offset));
    if (size > rounded) add_free(offset + rounded, size - rounded);
    return offset;
  }

  void give(size_t offset, size_t rounded) {
    size_t start = offset, size = rounded;
    auto next = by_offset.lower_bound(offset);
    if (next != by_offset.end() && next->first == offset + rounded) {
      size += next->second;
      auto after = std::next(next);
      remove_free(next);
      next = after;
    }
    if (next != by_offset.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        start = prev->first;
        size += prev->second;
        remove_free(prev);
      }
    }
    add_free(start, size);
  }
};

// ---- DeviceArena --------------------------------------------------------------------------

DeviceArena::DeviceArena(std::string device_name, const dlrt_plugin_api* api, dlrt_device* device,
                         ArenaOptions options)
    : name_(std::move(device_name)), api_(api), device_(device), options_(options) {
  stats_.limit = options_.limit;
  if (options_.share < 1) options_.share = 1;
}

DeviceArena::~DeviceArena() {
  if (stats_.in_use > 0)
    log(DLRT_LOG_WARNING, "memory",
        "{}: the arena is destroyed with {} still in use; whatever "
        "holds it (a tensor, graph or executable outliving its context) now points at freed "
        "memory",
        name_, format_bytes(stats_.in_use));
  drop_cache();
  if (pool_ && pool_->base != nullptr) {
    void* base = pool_->base;
    plugin_call_noexcept([&] { api_->mem_free(device_, base); });
  }
}

Buffer DeviceArena::allocate(size_t bytes, const char* what) {
  if (bytes == 0)
    fail(DLRT_INVALID_ARGUMENT,
         fmt::format("{}: {} asked for 0 bytes; expected at least 1", name_, what));
  if (bytes > SIZE_MAX - kArenaAlignment)
    out_of_memory(stats(), bytes, what, "the request does not fit in the address space");
  const size_t rounded = round_up(bytes);
  void* data = options_.allow_growth ? allocate_growing(bytes, rounded, what) : nullptr;
  if (!options_.allow_growth) {
    std::lock_guard<std::mutex> lock(mu_);
    data = allocate_pooled(bytes, rounded, what);
  }
  return Buffer(this, data, bytes);
}

void* DeviceArena::allocate_growing(size_t bytes, size_t rounded, const char* what) {
  bool flush = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (options_.limit != 0 && (bytes > options_.limit || stats_.in_use > options_.limit - bytes))
      out_of_memory(stats_, bytes, what, "over the device's memory limit");
    // Counted now, so two threads cannot both pass the check; undone if the plugin refuses.
    stats_.in_use += bytes;
    stats_.peak = std::max(stats_.peak, stats_.in_use);
    if (auto hit = cache_.find(rounded); hit != cache_.end()) {
      void* data = hit->second;
      cache_.erase(hit);
      cached_ -= rounded;  // stays reserved: it moves from the cache to the caller
      return data;
    }
    // A new block must not push what the arena holds past the limit: empty the cache first.
    flush = options_.limit != 0 && stats_.reserved + rounded > options_.limit && cached_ > 0;
  }
  if (flush) drop_cache();

  auto undo = [&] {  // returns the stats after the undo, for the message
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use -= bytes;
    return stats_;
  };
  auto try_alloc = [&](void** out) {
    return plugin_status("mem_alloc",
                         [&] { return api_->mem_alloc(device_, rounded, kArenaAlignment, out); });
  };
  void* data = nullptr;
  StatusValue s = try_alloc(&data);
  // The plugin is out of memory, but the cache may hold enough: give it back and try again.
  if (s.code == DLRT_RESOURCE_EXHAUSTED && drop_cache() > 0) {
    data = nullptr;
    s = try_alloc(&data);
  }
  if (!s.ok() || data == nullptr) {
    const ArenaStats at = undo();
    const std::string why = s.ok() ? "the plugin's mem_alloc returned OK and NULL"
                                   : fmt::format("the plugin: {}", s.message);
    if (s.code != DLRT_RESOURCE_EXHAUSTED && !s.ok())
      fail(s, fmt::format("{}: allocating {} for {}", name_, format_bytes(bytes), what));
    out_of_memory(at, bytes, what, why);
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.reserved += rounded;
  ++stats_.num_allocs;
  return data;
}

void DeviceArena::reserve_pool(size_t bytes, const char* what) {
  uint64_t free_bytes = options_.physical_free;
  if (free_bytes == 0) {
    uint64_t total = 0;
    plugin_call(fmt::format("{}: memory_info (to size the reservation, growth off)", name_),
                [&] { return api_->memory_info(device_, &free_bytes, &total); });
  }
  const double share = options_.preallocate_fraction * static_cast<double>(free_bytes) /
                       static_cast<double>(options_.share);
  uint64_t want = share >= 18446744073709549568.0 ? UINT64_MAX : static_cast<uint64_t>(share);
  if (options_.limit != 0) want = std::min(want, options_.limit);
  want = want / kArenaAlignment * kArenaAlignment;
  if (want == 0 || want > SIZE_MAX)
    out_of_memory(stats_, bytes, what,
                  fmt::format("growth is off and {} of the {} free, split {} way(s), leaves {} "
                              "to reserve",
                              options_.preallocate_fraction, format_bytes(free_bytes),
                              options_.share, format_bytes(want)));
  void* base = nullptr;
  const StatusValue s = plugin_status("mem_alloc", [&] {
    return api_->mem_alloc(device_, static_cast<size_t>(want), kArenaAlignment, &base);
  });
  if (s.code == DLRT_RESOURCE_EXHAUSTED)
    out_of_memory(stats_, bytes, what,
                  fmt::format("growth is off and reserving {} ({} of the free memory) failed: {}",
                              format_bytes(want), options_.preallocate_fraction, s.message));
  if (!s.ok() || base == nullptr) {
    const std::string context =
        fmt::format("{}: reserving {} ({} of the free memory, growth off) for {}", name_,
                    format_bytes(want), options_.preallocate_fraction, what);
    if (!s.ok()) fail(s, context);
    fail(DLRT_INTERNAL, context + ": mem_alloc returned OK and NULL");
  }
  pool_ = std::make_unique<Pool>();
  pool_->base = base;
  pool_->size = static_cast<size_t>(want);
  pool_->add_free(0, pool_->size);
  stats_.reserved = want;
  ++stats_.num_allocs;
  log(DLRT_LOG_INFO, "memory", "{}: reserved {} (growth off)", name_, format_bytes(want));
}

void* DeviceArena::allocate_pooled(size_t bytes, size_t rounded, const char* what) {
  if (options_.limit != 0 && (bytes > options_.limit || stats_.in_use > options_.limit - bytes))
    out_of_memory(stats_, bytes, what, "over the device's memory limit");
  if (!pool_) reserve_pool(bytes, what);
  const size_t offset = pool_->take(rounded);
  if (offset == SIZE_MAX)
    out_of_memory(stats_, bytes, what,
                  fmt::format("the reservation of {} (growth off) has no free range that large; "
                              "the largest is {}",
                              format_bytes(pool_->size), format_bytes(pool_->largest_free())));
  stats_.in_use += bytes;
  stats_.peak = std::max(stats_.peak, stats_.in_use);
  return static_cast<char*>(pool_->base) + offset;
}

void DeviceArena::release(void* data, size_t size) noexcept {
  const size_t rounded = round_up(size);
  std::unique_lock<std::mutex> lock(mu_);
  stats_.in_use -= size;
  if (pool_) {
    pool_->give(static_cast<size_t>(static_cast<char*>(data) - static_cast<char*>(pool_->base)),
                rounded);
    return;
  }
  if (cached_ + rounded <= kArenaCacheBytes) {
    try {
      cache_.emplace(rounded, data);
      cached_ += rounded;
      return;
    } catch (...) {  // no memory for the cache entry: free the block instead
    }
  }
  stats_.reserved -= rounded;
  lock.unlock();
  plugin_call_noexcept([&] { api_->mem_free(device_, data); });
}

uint64_t DeviceArena::drop_cache() noexcept {
  std::multimap<size_t, void*> blocks;
  uint64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(cache_);
    bytes = cached_;
    cached_ = 0;
    stats_.reserved -= bytes;
  }
  for (const auto& [size, data] : blocks) {
    void* p = data;
    plugin_call_noexcept([&] { api_->mem_free(device_, p); });
  }
  return bytes;
}

void DeviceArena::trim() noexcept { drop_cache(); }

ArenaStats DeviceArena::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::string DeviceArena::limit_text(uint64_t limit) const {
  if (limit == 0) return "none";
  // A limit above what the device has (a typo'd DLRT_GPU_MEMORY_LIMIT_MB, UINT64_MAX as "no
  // limit") is no limit at all: say so, instead of showing 18446744073709551615 bytes as if it
  // bound anything. The error path only: memory_info is asked here, never on the fast path.
  uint64_t free_bytes = 0, total = 0;
  StatusValue s;
  try {
    s = take_status(api_->memory_info(device_, &free_bytes, &total));
  } catch (...) {
    s = {DLRT_INTERNAL, "memory_info threw"};
  }
  if (s.ok() && total != 0 && limit > total)
    return fmt::format(
        "{}, larger than the device's {} (so the device's memory, not the limit, "
        "is what ran out)",
        format_bytes(limit), format_bytes(total));
  return format_bytes(limit);
}

void DeviceArena::out_of_memory(const ArenaStats& at, size_t bytes, const char* what,
                                const std::string& why) const {
  fail(DLRT_RESOURCE_EXHAUSTED,
       fmt::format("out of memory on {}: {} asked for {}; in use {}, peak {}, limit {}: {}", name_,
                   what, format_bytes(bytes), format_bytes(at.in_use), format_bytes(at.peak),
                   limit_text(at.limit), why));
}

}  // namespace dlrt::core
