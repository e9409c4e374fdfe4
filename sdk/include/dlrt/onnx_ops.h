/* dlrt/onnx_ops.h: which ONNX ops the importer converts, and into what (docs/onnx.md), for
 * listings such as `dlprobe --ops --onnx`. Needs no context; every string is static (alive
 * as long as libdlrt is loaded). Kept out of dlrt.h because only such listings need it.
 *
 *   for (size_t i = 0; i < dlrt_onnx_op_count(); ++i)
 *     printf("%s -> %s\n", dlrt_onnx_op_name(i), dlrt_onnx_op_maps_to(i));
 *
 * Whether a converted model then runs on a device is the devices' answer for the dlrt ops the
 * converter emits: dlrt_onnx_op_dlrt_op lists the registered dlrt ops its description names
 * outside parentheses (which hold notes, such as an optional transpose or a fusion), all
 * alternatives included ("a or b": which one a node takes depends on the model); dlprobe
 * probes those per device. The list is the description's, so a converter that also
 * emits a helper op it does not name (a transpose for a layout) is not caught by it; the
 * session itself always checks every node it places. */
#ifndef DLRT_ONNX_OPS_H_
#define DLRT_ONNX_OPS_H_

#include <stddef.h>

#include "dlrt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX ops (default domain) with a converter, sorted by name. */
DLRT_API size_t dlrt_onnx_op_count(void);
/* The ONNX op type of entry `index` ("Conv"); NULL for an index out of range. */
DLRT_API const char* dlrt_onnx_op_name(size_t index);
/* One line on what it becomes ("conv2d_bias_act (constant W) or transpose + conv2d + ...");
 * NULL for an index out of range. */
DLRT_API const char* dlrt_onnx_op_maps_to(size_t index);
/* The registered dlrt ops that line names outside parentheses, in order of first mention (0 for host-only
 * converters such as Shape or Constant, and for an index out of range), and the k-th of them
 * (NULL out of range). */
DLRT_API size_t dlrt_onnx_op_dlrt_op_count(size_t index);
DLRT_API const char* dlrt_onnx_op_dlrt_op(size_t index, size_t k);

#ifdef __cplusplus
}
#endif

#endif /* DLRT_ONNX_OPS_H_ */
