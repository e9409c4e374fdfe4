// npy.hpp: NumPy's .npy format (version 1.0 / 2.0, little-endian, C order), read and
// written for dlrun's --input and --save-outputs. The format is NumPy's own
// (numpy/lib/format.py): magic "\x93NUMPY", a version, a header length, a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded to 64 bytes, then data.
#pragma once

#include <dlrt/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dlrt::npy {

struct Array {
  dlrt_dtype dtype = DLRT_F32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

// Throws std::runtime_error naming the file and what was wrong (not .npy, a dtype dlrt lacks,
// Fortran order, big-endian, a data size that does not match the shape).
Array read(const std::string& path);
void write(const std::string& path, const Array& a);

// "<f4", "<i8", "|b1", ... for a dtype; "" when NumPy has none for it (bf16).
std::string descr_of(dlrt_dtype d);

}  // namespace dlrt::npy
