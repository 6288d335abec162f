// The form-factor kernel's vectorised host loops (formfactor/host_kernels.cpp, one clone per instruction set,
// util/simd.h) and the per-patch record of what the kernel derives from one patch (whole_patch.h): each must
// give bitwise what the one-point-at-a-time code gives, whichever clone this processor runs. This file is
// compiled for plain x86-64 (no clones), so the references below are the SSE2 code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formfactor/point_pair_rule.h"
#include "formfactor/point_polygon.h"
#include "formfactor/unoccluded.h"

namespace rad {
namespace {

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A convex polygon of `n` corners on a circle in the plane through `centre` spanned by u and v (radius r),
// counter-clockwise about u x v.
ConvexPolygon RegularPolygon(int n, Vec3 centre, Vec3 u, Vec3 v, double r, double phase) {
  std::vector<Vec3> corners;
  for (int k = 0; k < n; ++k) {
    const double a = phase + 2 * kPi * k / n;
    corners.push_back(centre + u * (r * std::cos(a)) + v * (r * std::sin(a)));
  }
  return MakeConvexPolygon(corners.data(), n);
}

TEST(HostKernels, ContourLoopGivesTheBitsOfOnePointAtATime) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  int compared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    // A receiver of 3 to 8 corners facing -z at height 1 to 3, seen from points below it (some right under an
    // edge or a corner, where terms vanish or angles are tiny).
    const int n = 3 + trial % 6;
    const ConvexPolygon receiver = RegularPolygon(n, Vec3{uniform(random), uniform(random), 2 + uniform(random)},
                                                  Vec3{0, 1, 0}, Vec3{1, 0, 0}, 0.2 + std::fabs(uniform(random)),
                                                  uniform(random));
    const Vec3 nx = Normalize(Vec3{0.3 * uniform(random), 0.3 * uniform(random), 1});
    double px[17], py[17], pz[17], batch[17];
    for (int p = 0; p < 17; ++p) {
      px[p] = 2 * uniform(random), py[p] = 2 * uniform(random), pz[p] = 0.1 * uniform(random);
      if (p == 16) px[p] = receiver.v[0].x, py[p] = receiver.v[0].y;  // under a corner
    }
    const int count = 1 + trial % 17;
    PointToPolygonFormFactors(px, py, pz, count, nx, receiver, batch);
    for (int p = 0; p < count; ++p, ++compared) {
      const double one = PointToPolygonFormFactor(Vec3{px[p], py[p], pz[p]}, nx, receiver);
      ASSERT_TRUE(SameBits(batch[p], one)) << "trial " << trial << " point " << p << ": " << batch[p] << " vs " << one;
      EXPECT_GT(one, 0);
      EXPECT_LT(one, 1);
    }
  }
  EXPECT_GT(compared, 3000);
}

// The node-pair sum against the same loop inlined here, and against a plain double loop over the node pairs in
// the order of the formula (to rounding): the padding of the receiver's nodes (kNodeLanes) adds nothing.
TEST(HostKernels, NodePairSumGivesTheBitsOfThePlainLoop) {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const Vec3 square[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const ConvexPolygon emitter = MakeConvexPolygon(square, 4);
  const Vec3 ne{0, 0, 1};
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 centre{2 * uniform(random), 2 * uniform(random), 3 + uniform(random)};
    const Vec3 nr = Normalize(Vec3{0.4 * uniform(random), 0.4 * uniform(random), -1});
    const Vec3 u = Normalize(Cross(nr, Vec3{1, 0, 0})), v = Cross(nr, u);
    const ConvexPolygon receiver =
        trial % 3 == 0 ? RegularPolygon(3, centre, u, v, 0.5, uniform(random))
                       : (trial % 3 == 1 ? RegularPolygon(4, centre, u, v, 0.6, uniform(random))
                                         : MakeConvexPolygon(std::vector<Vec3>{centre, centre + u * 0.7,
                                                                               centre + u * 0.9 + v * 0.5,
                                                                               centre + v * 0.4}
                                                                 .data(),
                                                             4));
    const NodeShape se = NodeShapeOf(emitter), sr = NodeShapeOf(receiver);
    int pe[kMaxNodeRules], pr[kMaxNodeRules];
    const int ne_ = NodeRuleOptions(se, pe), nr_ = NodeRuleOptions(sr, pr);
    for (int a = 0; a < ne_; ++a)
      for (int b = 0; b < nr_; ++b) {
        QuadratureNodes es, rs;
        point_pair::MakeNodes(emitter, se, pe[a], es);
        point_pair::MakeNodes(receiver, sr, pr[b], rs);
        const NodeSpan e = SpanOf(es), r = SpanOf(rs);
        const double host = NodePairSumHost(e, ne, r, nr), inlined = NodePairSumLoop(e, ne, r, nr);
        ASSERT_TRUE(SameBits(host, inlined)) << host << " vs " << inlined;
        double plain = 0;
        for (int i = 0; i < e.count; ++i)
          for (int j = 0; j < r.count; ++j) {
            const Vec3 d = Vec3{r.x[j], r.y[j], r.z[j]} - Vec3{e.x[i], e.y[i], e.z[i]};
            plain += e.weight[i] * r.weight[j] * Dot(ne, d) * -Dot(nr, d) / (LengthSquared(d) * LengthSquared(d));
          }
        EXPECT_NEAR(host / plain - 1, 0, 1e-13) << "rules " << pe[a] << " x " << pr[b];
        ++compared;
      }
  }
  EXPECT_GT(compared, 1000);
}

// A pair of whole patches gives the same bits with their WholePatch (spheres, spreads, normals and rule shapes
// made once per patch) as without: over squares, rectangles, triangles and other quadrilaterals near and far,
// so that every path of the unoccluded kernel (node-pair rules, checked rules, emitter-side rules, adaptive
// cubature) reads it.
TEST(HostKernels, WholePatchCacheGivesTheSameBits) {
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const QuadratureSettings q;
  int whole = 0, nodePairPairs = 0, adaptivePairs = 0;
  for (int trial = 0; trial < 600; ++trial) {
    auto shape = [&](int kind, Vec3 centre, Vec3 u, Vec3 v, double size) {
      if (kind == 0) return RegularPolygon(4, centre, u, v, size, 0.25 * kPi);
      if (kind == 1) return RegularPolygon(3, centre, u, v, size, uniform(random));
      const Vec3 c[4] = {centre, centre + u * size, centre + u * (1.3 * size) + v * (0.6 * size),
                         centre + v * (0.8 * size)};
      return MakeConvexPolygon(c, 4);
    };
    const ConvexPolygon emitter = shape(trial % 3, Vec3{0, 0, 0}, Vec3{1, 0, 0}, Vec3{0, 1, 0}, 0.5);
    const double distance = trial % 4 == 0 ? 0.3 : 0.5 + 10 * std::fabs(uniform(random));
    const Vec3 nr = Normalize(Vec3{uniform(random), uniform(random), -1.5});
    const Vec3 u = Normalize(Cross(nr, Vec3{1, 0, 0})), v = Cross(nr, u);
    const ConvexPolygon receiver =
        shape((trial / 3) % 3, Vec3{uniform(random), uniform(random), distance}, u, v, 0.2 + std::fabs(uniform(random)));
    const Vec3 ne = Normalize(PolygonNormal(emitter));
    WholePatch we, wr;
    DescribeWholePatch(emitter, we);
    DescribeWholePatch(receiver, wr);
    const ClippedPair plain = ClipPair(emitter, ne, receiver, wr.unitNormal);
    const ClippedPair cached = ClipPair(emitter, ne, receiver, wr.unitNormal, &we, &wr);
    ASSERT_EQ(plain.whole, cached.whole);
    if (cached.emitter.n == 0) continue;
    const UnoccludedResult a = UnoccludedFormFactor(plain, ne, PolygonArea(emitter), q);
    const UnoccludedResult b = UnoccludedFormFactor(cached, ne, PolygonArea(emitter), q, &we, &wr);
    ASSERT_TRUE(SameBits(a.formFactor, b.formFactor)) << "trial " << trial << ": " << a.formFactor << " vs " << b.formFactor;
    EXPECT_EQ(a.nodePairs, b.nodePairs);
    EXPECT_EQ(a.evaluations, b.evaluations);
    whole += cached.whole ? 1 : 0;
    nodePairPairs += b.nodePairs > 0 ? 1 : 0;
    adaptivePairs += b.evaluations > 0 ? 1 : 0;
  }
  EXPECT_GT(whole, 100);
  EXPECT_GT(nodePairPairs, 50);
  EXPECT_GT(adaptivePairs, 50);
}

}  // namespace
}  // namespace rad
