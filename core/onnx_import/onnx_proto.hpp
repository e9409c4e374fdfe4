// onnx_proto.hpp: ONNX's generated protobuf classes (Debian's libonnx-dev, built with ONNX_ML
// in namespace onnx), the one include of them in dlrt.
#pragma once

#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>
