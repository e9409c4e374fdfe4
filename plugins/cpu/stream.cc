// stream.cc: cpu streams and events. A dlrt stream owns a dnnl::stream (in-order) on the
// plugin's engine; primitives executed on it, and the memcpy-based copies, finish on the
// calling thread before the enqueueing call returns (cpu.hpp). Hence an event is complete once
// recorded, stream_wait_event has nothing to order, and stream_synchronize only calls
// dnnl::stream::wait() (which returns at once) to stay correct should an asynchronous runtime
// ever be used.
#include <string>

#include "cpu.hpp"
#include "dnnl_status.hpp"

namespace dlrt::cpu {

using plugin::fail;
using plugin::guard;

void check_stream_device(dlrt_stream* stream, dlrt_device* device, const char* entry) {
  plugin::require(stream, "stream");
  if (stream->device->plugin != device->plugin)
    fail(DLRT_INVALID_ARGUMENT, prefix() + entry +
                                    ": the stream belongs to another cpu plugin instance, "
                                    "expected a stream of this device");
}

dlrt_status* stream_create(dlrt_device* device, dlrt_stream** out_stream) {
  if (out_stream != nullptr) *out_stream = nullptr;
  return guard([&] {
    plugin::require(device, "device");
    plugin::require(out_stream, "out_stream");
    dlrt_plugin* p = device->plugin;
    auto s = dnnl_call("create a dnnl::stream", __FILE__, __LINE__,
                       [&] { return dnnl::stream(p->engine, dnnl::stream::flags::in_order); });
    *out_stream = new dlrt_stream{device, std::move(s)};
  });
}

void stream_destroy(dlrt_stream* stream) {
  plugin::guard_void("stream_destroy", [&] { delete stream; });
}

dlrt_status* stream_synchronize(dlrt_stream* stream) {
  return guard([&] {
    plugin::require(stream, "stream");
    dnnl_call("wait for the stream", __FILE__, __LINE__, [&] { stream->stream.wait(); });
  });
}

dlrt_status* event_create(dlrt_device* device, dlrt_event** out_event) {
  if (out_event != nullptr) *out_event = nullptr;
  return guard([&] {
    plugin::require(device, "device");
    plugin::require(out_event, "out_event");
    *out_event = new dlrt_event{device};
  });
}

void event_destroy(dlrt_event* event) {
  plugin::guard_void("event_destroy", [&] { delete event; });
}

dlrt_status* event_record(dlrt_event* event, dlrt_stream* stream) {
  return guard([&] {
    plugin::require(event, "event");
    check_stream_device(stream, event->device, "event_record");
    event->recorded = true;  // everything enqueued so far has already run
  });
}

dlrt_status* stream_wait_event(dlrt_stream* stream, dlrt_event* event) {
  return guard([&] {
    plugin::require(stream, "stream");
    plugin::require(event, "event");
    check_stream_device(stream, event->device, "stream_wait_event");
  });
}

// An event never recorded counts as complete (as cudaEventSynchronize has it).
dlrt_status* event_synchronize(dlrt_event* event) {
  return guard([&] { plugin::require(event, "event"); });
}

}  // namespace dlrt::cpu
