// stream.cc: reference streams and events.
//
// A reference stream is in-order and synchronous: every copy, memset and kernel enqueued on it
// runs to completion on the calling thread before the enqueueing call returns. Hence:
//   - stream_synchronize has nothing to wait for (it only reports that the stream is valid);
//   - an event is complete the moment it is recorded, so event_synchronize never blocks and
//     stream_wait_event has nothing to order — work enqueued later cannot overtake work that
//     already finished;
//   - errors are never asynchronous: each one is returned by the call that enqueued the work.
// The handles still check who they belong to, so a host that mixes streams and devices up
// fails here, deterministically, instead of only on a real GPU.
//
// A capturing stream (capture.cc) defers its work instead, and follows CUDA's rules for it:
// an event recorded on it is recorded when the graph runs, and synchronising it is an error
// (CUDA invalidates the capture), so a host that breaks those rules fails here too.
#include <string>

#include "reference.hpp"

namespace dlrt::reference {

using plugin::fail;
using plugin::guard;

void check_stream_device(dlrt_stream* stream, dlrt_device* device, const char* entry) {
  plugin::require(stream, "stream");
  if (stream->device->dev != device->dev)
    fail(DLRT_INVALID_ARGUMENT, prefix() + entry + ": the stream belongs to device " +
                                    stream->device->dev->label + ", expected one of device " +
                                    device->dev->label);
}

dlrt_status* stream_create(dlrt_device* device, dlrt_stream** out_stream) {
  if (out_stream != nullptr) *out_stream = nullptr;
  return guard([&] {
    plugin::require(device, "device");
    plugin::require(out_stream, "out_stream");
    *out_stream = new dlrt_stream{device};
  });
}

void stream_destroy(dlrt_stream* stream) {
  plugin::guard_void("stream_destroy", [&] { delete stream; });
}

dlrt_status* stream_synchronize(dlrt_stream* stream) {
  return guard([&] {
    plugin::require(stream, "stream");
    if (stream->recording)
      fail(DLRT_FAILED_PRECONDITION,
           prefix() + "stream_synchronize: the stream on " + stream->device->dev->label +
               " is capturing; a captured stream cannot be synchronised until capture_end");
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

// As with CUDA events, an event records on a stream of its own device.
dlrt_status* event_record(dlrt_event* event, dlrt_stream* stream) {
  return guard([&] {
    plugin::require(event, "event");
    check_stream_device(stream, event->device, "event_record");
    // Everything enqueued so far has already run (or, capturing: will have, at this point of
    // the graph).
    run_or_record(stream, [event] { event->recorded = true; });
  });
}

// The event may belong to another device of this plugin (plugin.h); all of them are
// synchronous, so there is nothing to wait for.
dlrt_status* stream_wait_event(dlrt_stream* stream, dlrt_event* event) {
  return guard([&] {
    plugin::require(stream, "stream");
    plugin::require(event, "event");
    if (event->device->plugin != stream->device->plugin)
      fail(DLRT_INVALID_ARGUMENT, prefix() +
                                      "stream_wait_event: the event belongs to another "
                                      "plugin instance, expected one of this plugin's devices");
  });
}

// Like cudaEventSynchronize, an event never recorded counts as complete.
dlrt_status* event_synchronize(dlrt_event* event) {
  return guard([&] { plugin::require(event, "event"); });
}

}  // namespace dlrt::reference
