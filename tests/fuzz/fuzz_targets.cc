// tests/fuzz/fuzz_targets.cc: see fuzz_targets.hpp.
#include "fuzz_targets.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "io/idx.hpp"
#include "io/safetensors.hpp"
#include "onnx_import/model.hpp"
#include "onnx_import/tensor_proto.hpp"
#include "status.hpp"

namespace dlrt::fuzz {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("fuzz invariant broken: ") + what);
}

size_t element_size(dlrt_dtype t) {
  const size_t n = dlrt_dtype_size(t);
  return n != 0 ? n : 1;
}

}  // namespace

int idx_one_input(const uint8_t* data, size_t size) {
  core::io::IdxArray a;
  try {
    a = core::io::parse_idx(data, size);
  } catch (const core::Error&) {
    return 0;
  }
  require(a.data != nullptr, "idx: data is NULL");
  require(!a.dims.empty() && a.dims.size() <= DLRT_MAX_RANK, "idx: rank out of 1..8");
  uint64_t n = element_size(a.dtype);
  for (int64_t d : a.dims) n *= static_cast<uint64_t>(d);
  require(n == a.bytes, "idx: bytes != element size × product of dims");
  volatile uint8_t sink = 0;
  if (a.bytes > 0) sink = a.data.get()[a.bytes - 1];  // ASan: the buffer really is that long
  (void)sink;
  return 1;
}

int safetensors_one_input(const uint8_t* data, size_t size) {
  core::io::SafetensorsHeader h;
  try {
    h = core::io::parse_safetensors(data, size);
  } catch (const core::Error&) {
    return 0;
  }
  require(h.data_start + h.data_bytes == size, "safetensors: sections do not cover the input");
  std::vector<core::io::SafetensorsTensor> tensors;
  uint64_t expected = 0;
  for (const auto& e : h.entries) {
    require(e.begin == expected && e.end >= e.begin, "safetensors: entries do not tile");
    expected = e.end;
    tensors.push_back({e.name, e.dtype, e.dims, data + h.data_start + e.begin,
                       static_cast<size_t>(e.end - e.begin)});
  }
  require(expected == h.data_bytes, "safetensors: entries do not reach the end");

  // Round trip: our writer's header over the same tensors parses to the same thing.
  std::string again = core::io::safetensors_header_bytes(tensors, h.metadata);
  for (const auto& t : tensors) again.append(static_cast<const char*>(t.data), t.bytes);
  core::io::SafetensorsHeader h2 =
      core::io::parse_safetensors(reinterpret_cast<const uint8_t*>(again.data()), again.size());
  require(h2.entries.size() == h.entries.size(), "round trip: tensor count");
  require(h2.metadata == h.metadata, "round trip: metadata");
  for (size_t i = 0; i < h.entries.size(); ++i) {
    const auto& a = h.entries[i];
    const auto& b = h2.entries[i];
    require(a.name == b.name && a.dtype == b.dtype && a.dims == b.dims, "round trip: entry");
    require(b.end - b.begin == a.end - a.begin &&
                std::memcmp(again.data() + h2.data_start + b.begin, data + h.data_start + a.begin,
                            a.end - a.begin) == 0,
            "round trip: data");
  }
  return 1;
}

int onnx_model_one_input(const uint8_t* data, size_t size) {
  onnx_import::OnnxModel m;
  try {
    m = onnx_import::load_model_bytes(data, size);
  } catch (const core::Error&) {
    return 0;
  }
  const int n = m.proto.graph().node_size();
  require(static_cast<int>(m.order.size()) == n, "onnx: the order does not name every node");
  std::vector<bool> seen(n, false);
  for (int i : m.order) {
    require(i >= 0 && i < n && !seen[i], "onnx: a node is ordered twice or out of range");
    seen[i] = true;
  }
  for (const auto& t : m.proto.graph().initializer()) {
    try {
      const onnx_import::HostTensor h = onnx_import::read_tensor_proto(t, {}, "initializer");
      require(h.bytes.size() == static_cast<size_t>(h.element_count()) * dlrt_dtype_size(h.dtype),
              "onnx: an initializer's bytes do not match its dims");
    } catch (const core::Error&) {
    }
  }
  return 1;
}

}  // namespace dlrt::fuzz
