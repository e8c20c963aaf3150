// Test entry point for both tiers. In a CUDA build it names the GPU it runs
// on, or marks every test skipped (never passed) when no GPU is present.
// Every heap of the tests has the watchdog on (120 s, unless
// DYNASOAR_WATCHDOG says otherwise), so that a test that hangs in a
// parallel_do says where before ctest's limit of 300 s ends it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"

namespace {

class DeviceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
#if DYNASOAR_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA device: device-tier tests skipped";
    }
    cudaDeviceProp prop{};
    DYNASOAR_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("[ device   ] %s, %d SMs, compute capability %d.%d\n", prop.name,
                prop.multiProcessorCount, prop.major, prop.minor);
#else
    std::printf("[ host     ] host tier: operations run on std::thread workers\n");
#endif
  }
};

}  // namespace

int main(int argc, char** argv) {
  setenv("DYNASOAR_WATCHDOG", "120", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new DeviceEnvironment);
  return RUN_ALL_TESTS();
}
