// The far-field rule of unoccluded pairs: both integrals of
//   F_ij = 1/(pi A_i) * integral over i, integral over j of cos_i cos_j / r^2 dA_j dA_i
// by fixed rules, the point-to-point kernel at every pair of nodes. Where the pair is well separated the kernel
// is smooth over both patches, and a node pair costs a few multiplications and one division where a contour
// evaluation (point_polygon.h) costs a square root and an arctangent per receiver edge: on a box of 2400 tiles
// the far pairs took 3 to 4.5 times less time for the same accuracy (and the kernel phase 2.4x less in all).
//
// Each side takes its own rule, by its own size: a side's error is that of its rule over a patch `ratio` of its
// lengths (RuleLength) from the other (the gap of SeparationOf), and the pair's error is bounded by the sum of
// both sides' bounds, measured by radiosity_bench_far_field (jobs/bench/far_field.cpp). Of the combinations
// within the tolerance, the one with the fewest node pairs is taken. Pairs the bounds do not cover but whose
// kernel is still smooth take checked rules (CheckedPointPairIntegral).
//
// A parallelogram takes a rule of degree 3, 5 or 7 on its affine map, a triangle one of degree 2 or 5
// (quadrature_nodes.h); any other convex quadrilateral is cut into two triangles. Other polygons (clipped pieces
// with more corners) keep the emitter-side rules (cubature.h).
#pragma once

#include "formfactor/convex_polygon.h"
#include "formfactor/cubature.h"
#include "formfactor/point_polygon.h"
#include "formfactor/quadrature_nodes.h"
#include "util/hd.h"
#include "util/vec3.h"

namespace rad {

// How a patch is covered by the node rules: one parallelogram, one triangle, two triangles, or not at all.
enum class NodeShape { kNone, kParallelogram, kTriangle, kTwoTriangles };

RAD_HD RAD_INLINE NodeShape NodeShapeOf(const ConvexPolygon &p) {
  if (p.n == 3) return NodeShape::kTriangle;
  if (p.n != 4) return NodeShape::kNone;
  const Vec3 twist = p.v[0] + p.v[2] - p.v[1] - p.v[3];  // zero for a parallelogram
  return LengthSquared(twist) <= 1e-24 * (LengthSquared(p.v[1] - p.v[0]) + LengthSquared(p.v[3] - p.v[0]))
             ? NodeShape::kParallelogram
             : NodeShape::kTwoTriangles;
}

// The rules a side can take, cheapest first: points per parallelogram (Gauss 2 x 2, Radon's 7, Gauss 3 x 3,
// Stroud's 12, Gauss 4 x 4) or per triangle (3, 7).
constexpr int kMaxNodeRules = 5;
RAD_HD RAD_INLINE int NodeRuleOptions(NodeShape shape, int *points) {
  if (shape == NodeShape::kParallelogram) {
    points[0] = 4, points[1] = 7, points[2] = 9, points[3] = 12, points[4] = 16;
    return 5;
  }
  if (shape == NodeShape::kNone) return 0;
  points[0] = 3, points[1] = 7;
  return 2;
}

// The relative error bound of each of a side's rules at `ratio` of its lengths from the other (cubature.h).
RAD_HD RAD_INLINE void NodeRuleBounds(NodeShape shape, double ratio, const int *points, int count, double *bounds) {
  const InversePowers p = InversePowersOf(ratio);
  for (int k = 0; k < count; ++k)
    bounds[k] = shape == NodeShape::kParallelogram ? ParallelogramRuleBound(points[k], p)
                                                   : TriangleRuleBound(points[k], p);
}

RAD_HD RAD_INLINE int NodeCount(NodeShape shape, int points) {
  return shape == NodeShape::kTwoTriangles ? 2 * points : points;
}

struct PointPairPlan {
  NodeShape emitterShape = NodeShape::kNone, receiverShape = NodeShape::kNone;
  int emitterPoints = 0, receiverPoints = 0;
  bool applies = false;
};

// The length a side's rule errors scale with: the rules act on the parallelogram's affine map, whose error
// grows with the length of each of its two sides (a product rule's like the 2m-th power of each), and the
// bounds were measured on squares, whose diameter is sqrt(2) times their side; so a parallelogram counts as the
// square of its longer side (a 3 x 0.9 rectangle's 4 x 4 rule was 4x over the bound written in its diameter).
// A triangle counts by its diameter (`diameter`, of its bounding sphere), as its bounds were measured.
RAD_HD RAD_INLINE double RuleLength(const ConvexPolygon &p, NodeShape shape, double diameter) {
  if (shape != NodeShape::kParallelogram) return diameter;
  return 1.4142135623730951 * sqrt(Larger(LengthSquared(p.v[1] - p.v[0]), LengthSquared(p.v[3] - p.v[0])));
}

// The node-pair loops run over the receiver's nodes in whole vectors (NodePairSumLoop): a rule's nodes are
// followed by copies of its first with weight 0 up to a multiple of this many, the widest vector's lanes.
// A copy adds 0 x (a finite term) to each sum: the same bits as without.
constexpr int kNodeLanes = 8;
RAD_HD RAD_INLINE int NodeLanes(int count) { return (count + kNodeLanes - 1) / kNodeLanes * kNodeLanes; }

namespace point_pair {

// The nodes of `points` for polygon p of the given shape, padded to NodeLanes (QuadratureNodes::kCapacity is a
// multiple of kNodeLanes).
RAD_HD inline void MakeNodes(const ConvexPolygon &p, NodeShape shape, int points, QuadratureNodes &out) {
  out.count = 0;
  if (shape == NodeShape::kParallelogram) {
    nodes::Parallelogram(p.v[0], p.v[1], p.v[3], points, out);
  } else {
    nodes::Triangle(p.v[0], p.v[1], p.v[2], points, out);
    if (shape == NodeShape::kTwoTriangles) nodes::Triangle(p.v[0], p.v[2], p.v[3], points, out);
  }
  for (int k = out.count; k < NodeLanes(out.count); ++k)
    out.x[k] = out.x[0], out.y[k] = out.y[0], out.z[k] = out.z[0], out.weight[k] = 0;
}

}  // namespace point_pair

// What the rules need of one side besides its nodes: its shape and rule length. Made once per whole patch
// (WholePatch, whole_patch.h) and read by its pairs. Its nodes are made per pair: kept per patch too (2 KB
// each), they were read from memory at N = 9600 (20 MB of them) and the kernel took 1.4x longer; made per pair
// they cost a tenth of it at N = 2400.
struct RuleSide {
  NodeShape shape = NodeShape::kNone;
  double ruleLength = 0;
};

// `diameter`: of the polygon's bounding sphere (PairSeparation), for a triangle's rule length.
RAD_HD RAD_INLINE RuleSide RuleSideOf(const ConvexPolygon &p, double diameter) {
  RuleSide side;
  side.shape = NodeShapeOf(p);
  side.ruleLength = RuleLength(p, side.shape, diameter);
  return side;
}

// A side's nodes for one rule: `count` of them, padded to NodeLanes(count).
struct NodeSpan {
  const double *x, *y, *z, *weight;
  int count;
};

RAD_HD RAD_INLINE NodeSpan SpanOf(const QuadratureNodes &nodes) {
  return NodeSpan{nodes.x, nodes.y, nodes.z, nodes.weight, nodes.count};
}

// The cheapest pair of rules whose summed bound is within safety x tolerance, for sides `gap` apart with the
// given bounding-sphere diameters; `applies` is false when none is. `emitterSide`, `receiverSide`: the sides'
// RuleSide when they are whole patches, or null.
RAD_HD inline PointPairPlan PlanPointPair(const ConvexPolygon &emitter, const ConvexPolygon &receiver, double gap,
                                          double emitterDiameter, double receiverDiameter, double tolerance,
                                          double safety, const RuleSide *emitterSide = nullptr,
                                          const RuleSide *receiverSide = nullptr) {
  PointPairPlan plan;
  if (!(gap > 0)) return plan;
  const RuleSide e = emitterSide ? *emitterSide : RuleSideOf(emitter, emitterDiameter);
  const RuleSide r = receiverSide ? *receiverSide : RuleSideOf(receiver, receiverDiameter);
  const NodeShape se = e.shape, sr = r.shape;
  int pe[kMaxNodeRules], pr[kMaxNodeRules];
  const int ne = NodeRuleOptions(se, pe), nr = NodeRuleOptions(sr, pr);
  if (ne == 0 || nr == 0) return plan;
  const double le = e.ruleLength, lr = r.ruleLength;
  double be[kMaxNodeRules], br[kMaxNodeRules];
  NodeRuleBounds(se, gap / le, pe, ne, be);
  NodeRuleBounds(sr, gap / lr, pr, nr, br);
  int best = 1 << 30;
  for (int a = 0; a < ne; ++a)
    for (int b = 0; b < nr; ++b) {
      const int cost = NodeCount(se, pe[a]) * NodeCount(sr, pr[b]);
      if (cost >= best || be[a] + br[b] > safety * tolerance) continue;
      best = cost;
      plan.emitterShape = se, plan.receiverShape = sr;
      plan.emitterPoints = pe[a], plan.receiverPoints = pr[b];
      plan.applies = true;
    }
  return plan;
}

// The sum over the node pairs of w_a w_b (n_i . d)(-n_j . d) / |d|^4, d = y_b - x_a: the integral of
// cos_i cos_j / r^2 over both patches without its 1/pi (e the emitter's nodes, r the receiver's). On the host it
// runs through NodePairSumHost (compiled for several instruction sets, host_kernels.cpp); the device runs the
// loop itself.
RAD_HD RAD_ALWAYS_INLINE double NodePairSumLoop(const NodeSpan &e, Vec3 emitterNormal, const NodeSpan &r,
                                                Vec3 receiverNormal) {
  // The receiver's nodes in whole vectors on the host (its padding, kNodeLanes); one by one on the device,
  // where a thread has no vectors.
#if defined(__CUDA_ARCH__)
  const int lanes = r.count;
#else
  const int lanes = NodeLanes(r.count);
#endif
  // The cosines' numerators n_i . (y - x) and n_j . (x - y) are differences of each node's heights above the
  // two planes, formed once per node rather than once per node pair.
  double receiverAbove[QuadratureNodes::kCapacity], receiverBelow[QuadratureNodes::kCapacity];
  for (int b = 0; b < lanes; ++b) {
    receiverAbove[b] = emitterNormal.x * r.x[b] + emitterNormal.y * r.y[b] + emitterNormal.z * r.z[b];
    receiverBelow[b] = receiverNormal.x * r.x[b] + receiverNormal.y * r.y[b] + receiverNormal.z * r.z[b];
  }
  // Summed per receiver node over the emitter's nodes first: independent sums the compiler can vectorise, where
  // one running sum over the node pairs waited on each addition (half the node-pair time on a box of tiles).
  double column[QuadratureNodes::kCapacity];
  for (int b = 0; b < lanes; ++b) column[b] = 0;
  for (int a = 0; a < e.count; ++a) {
    const double emitterAbove = emitterNormal.x * e.x[a] + emitterNormal.y * e.y[a] + emitterNormal.z * e.z[a];
    const double emitterBelow = receiverNormal.x * e.x[a] + receiverNormal.y * e.y[a] + receiverNormal.z * e.z[a];
    for (int b = 0; b < lanes; ++b) {
      const double dx = r.x[b] - e.x[a], dy = r.y[b] - e.y[a], dz = r.z[b] - e.z[a];
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double cosines = (receiverAbove[b] - emitterAbove) * (emitterBelow - receiverBelow[b]);
      column[b] += e.weight[a] * cosines / (r2 * r2);
    }
  }
  double sum = 0;
  for (int b = 0; b < lanes; ++b) sum += r.weight[b] * column[b];
  return sum;
}

double NodePairSumHost(const NodeSpan &e, Vec3 emitterNormal, const NodeSpan &r, Vec3 receiverNormal);

// The integral over both patches of cos_i cos_j / (pi r^2) by the rules of `plan` (which must apply): A_i F_ij.
// The sums run in one fixed order.
RAD_HD inline double PointPairIntegral(const ConvexPolygon &emitter, Vec3 emitterNormal, const ConvexPolygon &receiver,
                                       Vec3 receiverNormal, const PointPairPlan &plan) {
  QuadratureNodes emitterNodes, receiverNodes;
  point_pair::MakeNodes(emitter, plan.emitterShape, plan.emitterPoints, emitterNodes);
  point_pair::MakeNodes(receiver, plan.receiverShape, plan.receiverPoints, receiverNodes);
  const NodeSpan e = SpanOf(emitterNodes), r = SpanOf(receiverNodes);
#if defined(__CUDA_ARCH__)
  return NodePairSumLoop(e, emitterNormal, r, receiverNormal) / kPi;
#else
  return NodePairSumHost(e, emitterNormal, r, receiverNormal) / kPi;
#endif
}

// For pairs the bounds do not cover (one reaches the other's plane, where the cosine that vanishes there makes
// the factor small against a rule's error), while the kernel is smooth: a rule is taken when one of lower degree
// on other points agrees with it within `allowed` times its value (plus `floor`); their difference, which is
// mostly the coarser rule's error, then bounds the finer one's from above. Between two parallelograms Stroud's
// 12 points are checked against Radon's 7, then Gauss 4 x 4 against Gauss 3 x 3 (4 x 4 against the 12 points,
// of the same degree, agreed within the tolerance where 4 x 4 itself was up to 1.2 x off); otherwise a
// parallelogram's Gauss 4 x 4 against 3 x 3 with a triangle's 7 points against 3. Returns false (and leaves
// `integral`) when none agree; `nodePairs` counts the kernel evaluations spent either way.
RAD_HD inline bool CheckedPointPairIntegral(const ConvexPolygon &emitter, Vec3 emitterNormal,
                                            const ConvexPolygon &receiver, Vec3 receiverNormal, double allowed,
                                            double floor, double &integral, int &nodePairs,
                                            const RuleSide *emitterSide = nullptr,
                                            const RuleSide *receiverSide = nullptr) {
  const NodeShape se = emitterSide ? emitterSide->shape : NodeShapeOf(emitter);
  const NodeShape sr = receiverSide ? receiverSide->shape : NodeShapeOf(receiver);
  if (se == NodeShape::kNone || sr == NodeShape::kNone) return false;
  const bool parallelograms = se == NodeShape::kParallelogram && sr == NodeShape::kParallelogram;
  auto rule = [](NodeShape shape, int step, bool fine) {
    if (shape != NodeShape::kParallelogram) return fine ? 7 : 3;
    const int coarse[2] = {7, 9}, finer[2] = {12, 16};
    return fine ? finer[step] : coarse[step];
  };
  for (int step = parallelograms ? 0 : 1; step < 2; ++step) {
    double values[2];
    for (int fine = 0; fine < 2; ++fine) {
      PointPairPlan plan;
      plan.emitterShape = se, plan.receiverShape = sr, plan.applies = true;
      plan.emitterPoints = rule(se, step, fine), plan.receiverPoints = rule(sr, step, fine);
      values[fine] = PointPairIntegral(emitter, emitterNormal, receiver, receiverNormal, plan);
      nodePairs += NodeCount(se, plan.emitterPoints) * NodeCount(sr, plan.receiverPoints);
    }
    if (fabs(values[1] - values[0]) <= allowed * fabs(values[1]) + floor) {
      integral = values[1];
      return true;
    }
  }
  return false;
}

}  // namespace rad
