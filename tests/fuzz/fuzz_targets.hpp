// tests/fuzz/fuzz_targets.hpp: the bodies of the fuzz targets, shared by the libFuzzer
// entry points (fuzz_idx.cc, fuzz_safetensors.cc; clang only) and by fuzz_corpus_test, the
// plain driver CTest runs everywhere.
//
// Each takes any bytes. A malformed input must come back as a core::Error (the reader's
// DATA_LOSS and friends) — that is the expected way to fail, and the target returns 0. Any
// other exception, a crash, or a sanitizer report is a bug: the targets let it escape, so
// libFuzzer (and the driver) report it. An accepted input must also satisfy the invariants
// the readers promise (checked below), or the target throws std::logic_error.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dlrt::fuzz {

// parse_idx: on success, bytes == element size × product of dims and data is non-NULL.
// Returns 1 when the input was accepted, 0 when it was refused with a core::Error.
int idx_one_input(const uint8_t* data, size_t size);

// parse_safetensors: on success every entry lies inside the input, the entries tile the
// data section, and writing the parsed header again (safetensors_header_bytes) and parsing
// that gives the same tensors, dims, data and metadata.
int safetensors_one_input(const uint8_t* data, size_t size);

// load_model_bytes (the ONNX importer's reader and checker): on success the node order
// names every node once, and each initializer either reads (bytes == element count x
// element size) or is refused with a core::Error; nothing allocates past the limits.
int onnx_model_one_input(const uint8_t* data, size_t size);

// The text parsers (fuzz_text_targets.cc). A refused input's message must stay short (input
// echoed is cut, core/echo_text.hpp).
// parse_device_spec: on success the canonical form parses back to itself.
int device_spec_one_input(const uint8_t* data, size_t size);
// parse_plugin_options: on success no plugin name or key is empty and no key repeats.
int plugin_options_one_input(const uint8_t* data, size_t size);
// Settings::resolve with the input as every variable's value: only DLRT_COLLECTIVE_TIMEOUT
// may fail; the timeout is >= 1 ms and no saturated strtoull value is used.
int settings_one_input(const uint8_t* data, size_t size);

}  // namespace dlrt::fuzz
