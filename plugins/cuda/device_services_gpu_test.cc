// device_services_gpu_test.cc: the shared device-services suite
// (plugins/common/testing/device_services_suite.hpp) on the CUDA plugin's GPU. Part of
// dlrt_cuda_gpu_test, so labelled `gpu` in ctest; every case skips with the plugin's reason
// when device_count reports no device, as the other gpu tests do.
#include "testing/device_services_suite.hpp"

using dlrt::testing::DeviceServices;
INSTANTIATE_TEST_SUITE_P(gpu, DeviceServices,
                         ::testing::Values(dlrt::testing::DeviceServicesTarget{
                             "gpu", DLRT_CUDA_PLUGIN_PATH, {}}),
                         [](const auto& info) { return info.param.label; });
