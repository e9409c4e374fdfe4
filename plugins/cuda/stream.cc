// stream.cc: streams and events.
//
// Streams are created non-blocking (cudaStreamNonBlocking): they do not synchronise with
// the legacy default stream (stream 0), so a library or host code that uses stream 0 never
// stalls dlrt's work, and the reverse. All ordering between dlrt streams is explicit, with
// events. Events are created with timing disabled: they are cheaper to record and to wait on
// (dlrt measures time on the host, docs/design.md section 9).
#include <memory>
#include <string>

#include "cuda_plugin.hpp"

namespace dlrt::cuda {

dlrt_status* stream_create(dlrt_device* device, dlrt_stream** out_stream) noexcept {
  return plugin::guard([&] {
    plugin::require(out_stream, "out_stream");
    *out_stream = nullptr;
    plugin::require(device, "device");
    set_device(device->ordinal);  // a stream belongs to the device current at creation
    auto s = std::make_unique<dlrt_stream>();
    s->device = device;
    CUDA_CHECK_MSG(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking),
                   device->label + " stream_create");
    *out_stream = s.release();
  });
}

void stream_destroy(dlrt_stream* stream) noexcept {
  plugin::guard_void("stream_destroy", [&] {
    if (stream == nullptr) return;
    std::unique_ptr<dlrt_stream> owned(stream);
    set_device(stream->device->ordinal);
    // Returns at once; CUDA releases the stream when its pending work has completed.
    CUDA_CHECK_MSG(cudaStreamDestroy(stream->stream), stream->device->label + " stream_destroy");
  });
}

dlrt_status* stream_synchronize(dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    plugin::require(stream, "stream");
    set_device(stream->device->ordinal);
    // Also where asynchronous failures of earlier work (a faulting kernel) surface.
    CUDA_CHECK_MSG(cudaStreamSynchronize(stream->stream),
                   stream->device->label + " stream_synchronize");
  });
}

dlrt_status* event_create(dlrt_device* device, dlrt_event** out_event) noexcept {
  return plugin::guard([&] {
    plugin::require(out_event, "out_event");
    *out_event = nullptr;
    plugin::require(device, "device");
    set_device(device->ordinal);
    auto e = std::make_unique<dlrt_event>();
    e->device = device;
    CUDA_CHECK_MSG(cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming),
                   device->label + " event_create");
    *out_event = e.release();
  });
}

void event_destroy(dlrt_event* event) noexcept {
  plugin::guard_void("event_destroy", [&] {
    if (event == nullptr) return;
    std::unique_ptr<dlrt_event> owned(event);
    set_device(event->device->ordinal);
    CUDA_CHECK_MSG(cudaEventDestroy(event->event), event->device->label + " event_destroy");
  });
}

dlrt_status* event_record(dlrt_event* event, dlrt_stream* stream) noexcept {
  return plugin::guard([&] {
    plugin::require(event, "event");
    plugin::require(stream, "stream");
    // CUDA requires the event and the stream to share a device for a record (not for a wait).
    check_same_device(event->device, stream, "event_record");
    set_device(stream->device->ordinal);
    CUDA_CHECK_MSG(cudaEventRecord(event->event, stream->stream),
                   stream->device->label + " event_record");
  });
}

dlrt_status* stream_wait_event(dlrt_stream* stream, dlrt_event* event) noexcept {
  return plugin::guard([&] {
    plugin::require(stream, "stream");
    plugin::require(event, "event");
    // The event may belong to another GPU of this plugin: the wait happens on the device.
    set_device(stream->device->ordinal);
    CUDA_CHECK_MSG(
        cudaStreamWaitEvent(stream->stream, event->event, 0),
        stream->device->label + " stream_wait_event (event of " + event->device->label + ")");
  });
}

dlrt_status* event_synchronize(dlrt_event* event) noexcept {
  return plugin::guard([&] {
    plugin::require(event, "event");
    set_device(event->device->ordinal);
    // An event never recorded counts as complete: CUDA returns at once.
    CUDA_CHECK_MSG(cudaEventSynchronize(event->event), event->device->label + " event_synchronize");
  });
}

}  // namespace dlrt::cuda
