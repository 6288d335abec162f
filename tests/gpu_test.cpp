// GPU tests: the device runs the same physics as the host. They skip where no CUDA device is usable.
#include <gtest/gtest.h>

#include "cuda/device_info.h"
#include "cuda/unoccluded_batch.h"
#include "formfactor/geometry.h"
#include "tests/test_scenes.h"

namespace rad {
namespace {

TEST(Gpu, UnoccludedKernelMatchesHost) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices();
  const FormFactorGeometry g = BuildFormFactorGeometry(test::UnitCube(), 2);
  std::vector<DevicePair> pairs;
  std::vector<double> host;
  QuadratureSettings q;
  for (size_t i = 0; i < g.patches.size(); i += 5)
    for (size_t j = 0; j < g.patches.size(); ++j) {
      const Patch &a = g.patches[i], &b = g.patches[j];
      pairs.push_back(DevicePair{PatchPolygon(a), PatchPolygon(b), a.normal, b.normal, a.area});
      const ClippedPair cp = ClipPair(PatchPolygon(a), a.normal, PatchPolygon(b), b.normal);
      host.push_back(a.face == b.face ? 0.0 : UnoccludedFormFactor(cp, a.normal, a.area, q).formFactor);
    }
  std::vector<double> device;
  ASSERT_TRUE(UnoccludedBatchOnDevice(pairs, q, device));
  ASSERT_EQ(device.size(), host.size());
  // Same code, same order of operations; only fused multiply-adds may differ.
  for (size_t k = 0; k < host.size(); ++k) EXPECT_NEAR(device[k], host[k], 1e-12 + 1e-9 * host[k]) << k;
}

}  // namespace
}  // namespace rad
