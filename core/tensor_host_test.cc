// tensor_host_test.cc: tensors read in place and tensors over caller memory
// (dlrt_tensor_host_data, dlrt_tensor_wrap_host; dlrt.hpp's Tensor::host_data / wrap_host):
// on the cpu device (host_memory = 1) eager ops and executables read and write the caller's
// bytes; on the reference device (which checks its pointers, so declares no host memory) both
// are FAILED_PRECONDITION and the memory stays the caller's.
#include <dlrt/dlrt.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

dlrt::Context make_context() {
  return dlrt::Context(dlrt::ContextOptions()
                           .plugin_path(DLRT_TEST_PLUGIN_DIR)
                           .search_default_paths(false)
                           .visible_devices("")
                           .plugin_options(""));
}

void count_release(void* arg) { ++*static_cast<int*>(arg); }

dlrt_code code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const dlrt::Error& e) {
    return e.code();
  }
  return DLRT_OK;
}

TEST(TensorHost, CpuTensorReadAndWrittenInPlace) {
  dlrt::Context ctx = make_context();
  const size_t cpu = ctx.find_device("CPU:0");
  dlrt::Tensor x = dlrt::Tensor::create(ctx, cpu, DLRT_F32, {2, 2});
  x.write(std::vector<float>{1, 2, 3, 4});
  auto* p = static_cast<float*>(x.host_data());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::vector<float>(p, p + 4), (std::vector<float>{1, 2, 3, 4}));
  p[3] = -7;  // the tensor's own bytes: read() sees the write
  EXPECT_EQ(x.read<float>(), (std::vector<float>{1, 2, 3, -7}));
}

TEST(TensorHost, WrappedCallerMemoryFeedsOpsAndReceivesResults) {
  dlrt::Context ctx = make_context();
  const size_t cpu = ctx.find_device("CPU:0");
  std::vector<float> in = {1, -2, 3, -4, 5, -6};
  std::vector<float> out(6, 99.f);
  int released = 0;
  {
    dlrt::Tensor x =
        dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {2, 3}, in.data(), count_release, &released);
    dlrt::Tensor y = dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {2, 3}, out.data());
    EXPECT_EQ(x.host_data(), in.data());  // no copy either way
    EXPECT_EQ(x.read<float>(), in);
    ctx.run_op_into("relu", cpu, {x}, {y});
    EXPECT_EQ(out, (std::vector<float>{1, 0, 3, 0, 5, 0}));  // written into caller memory
    in[1] = 10;                                              // the op reads the bytes now there
    ctx.run_op_into("relu", cpu, {x}, {y});
    EXPECT_EQ(out[1], 10.f);

    // An executable: a wrapped feed, a wrapped fetch.
    dlrt::Graph g(ctx);
    dlrt::Value v = g.placeholder("v", DLRT_F32, {2, 3});
    dlrt::Value twice = g.op1("add", {v, v});
    dlrt::Executable ex = g.compile({v}, {twice});
    std::vector<dlrt::Tensor> fetched;
    fetched.push_back(dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {2, 3}, out.data()));
    ex.run({&x}, fetched);
    EXPECT_EQ(out, (std::vector<float>{2, 20, 6, -8, 10, -12}));
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);  // once, when x was destroyed
}

TEST(TensorHost, RefusalsLeaveTheMemoryToTheCaller) {
  dlrt::Context ctx = make_context();
  const size_t ref = ctx.find_device("REF:0"), cpu = ctx.find_device("CPU:0");
  std::vector<float> buf(8, 0.f);
  int released = 0;
  // The oracle checks that every pointer is its own allocation: no host memory there.
  EXPECT_EQ(code_of([&] {
              dlrt::Tensor::wrap_host(ctx, ref, DLRT_F32, {8}, buf.data(), count_release,
                                      &released);
            }),
            DLRT_FAILED_PRECONDITION);
  dlrt::Tensor r = dlrt::Tensor::create(ctx, ref, DLRT_F32, {2});
  EXPECT_EQ(code_of([&] { r.host_data(); }), DLRT_FAILED_PRECONDITION);
  // Misaligned for f32, NULL, a bad device index, a bad desc.
  auto* odd = reinterpret_cast<float*>(reinterpret_cast<char*>(buf.data()) + 1);
  EXPECT_EQ(code_of([&] {
              dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {4}, odd, count_release, &released);
            }),
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {4}, nullptr); }),
            DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(code_of([&] { dlrt::Tensor::wrap_host(ctx, 99, DLRT_F32, {4}, buf.data()); }),
            DLRT_OUT_OF_RANGE);
  EXPECT_EQ(code_of([&] { dlrt::Tensor::wrap_host(ctx, cpu, DLRT_F32, {0}, buf.data()); }),
            DLRT_INVALID_ARGUMENT);
  // u8 elements have no alignment to keep.
  dlrt::Tensor bytes =
      dlrt::Tensor::wrap_host(ctx, cpu, DLRT_U8, {3}, reinterpret_cast<char*>(buf.data()) + 1);
  EXPECT_EQ(bytes.byte_size(), 3u);
  EXPECT_EQ(released, 0);  // no tensor was made, so nothing was released

  // The C entries with NULL arguments answer INVALID_ARGUMENT and clear the outputs.
  void* data = &buf;
  dlrt_status* st = dlrt_tensor_host_data(nullptr, &data);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(dlrt_status_code(st), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(data, nullptr);
  dlrt_status_free(st);
  dlrt_tensor* t = reinterpret_cast<dlrt_tensor*>(&buf);
  st = dlrt_tensor_wrap_host(ctx.get(), cpu, nullptr, buf.data(), nullptr, nullptr, &t);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(dlrt_status_code(st), DLRT_INVALID_ARGUMENT);
  EXPECT_EQ(t, nullptr);
  dlrt_status_free(st);
}

}  // namespace
