#include "formfactor/patch_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/math_constants.h"
#include "util/prefetch.h"

namespace rad {

namespace {

// A group's centre and spread from its weighted centroids: the covariance C = L L^T (Cholesky; a pivot that
// rounding leaves at or below zero, as across a plane or along a line, is a direction without spread), and
// spread_k = sqrt(3) times column k of L.
void SetSpread(const std::vector<Vec3> &points, const std::vector<double> &weights, FacingGroup &group) {
  Vec3 weighted{0, 0, 0};
  for (size_t q = 0; q < points.size(); ++q) weighted = weighted + points[q] * weights[q];
  group.centre = weighted / group.area;
  if (points.size() < 2) return;
  double c[3][3] = {};
  for (size_t q = 0; q < points.size(); ++q) {
    const Vec3 d = points[q] - group.centre;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b <= a; ++b) c[a][b] += weights[q] * d[a] * d[b] / group.area;
  }
  const double scale = c[0][0] + c[1][1] + c[2][2];
  if (!(scale > 0)) return;
  double l[3][3] = {};
  for (int k = 0; k < 3; ++k) {
    double pivot = c[k][k];
    for (int m = 0; m < k; ++m) pivot -= l[k][m] * l[k][m];
    if (!(pivot > 1e-12 * scale)) continue;
    l[k][k] = std::sqrt(pivot);
    for (int a = k + 1; a < 3; ++a) {
      double v = c[a][k];
      for (int m = 0; m < k; ++m) v -= l[a][m] * l[k][m];
      l[a][k] = v / l[k][k];
    }
  }
  for (int k = 0; k < 3; ++k)
    for (int a = 0; a < 3; ++a) group.spread[k][a] = float(std::sqrt(3.0) * l[a][k]);
}

struct Builder {
  const std::vector<Patch> &patches;
  PatchTree &tree;
  int leafSize;
  bool facingGroups;  // the estimates' groups (BuildPatchTree), not the receivers' forest

  void AddFacingGroups(const int32_t *begin, const int32_t *end, PatchTreeNode &node) const {
    node.groupFirst = int32_t(tree.groups.size());
    std::vector<Vec3> points;
    std::vector<double> weights;
    for (int32_t direction = 0; direction < 6; ++direction) {
      const int axis = direction / 2;
      const double sign = direction % 2 == 0 ? 1.0 : -1.0;
      FacingGroup group;
      group.direction = direction;
      points.clear();
      weights.clear();
      for (const int32_t *p = begin; p != end; ++p) {
        const Patch &patch = patches[size_t(*p)];
        const double weight = patch.area * std::max(0.0, sign * patch.normal[axis]);
        if (!(weight > 0)) continue;
        points.push_back(patch.centroid);
        weights.push_back(weight);
        group.area += weight;
      }
      if (!(group.area > 0)) continue;
      SetSpread(points, weights, group);
      tree.groups.push_back(group);
    }
    node.groupCount = int32_t(tree.groups.size()) - node.groupFirst;
  }

  int32_t Build(int32_t first, int32_t count) {
    const int32_t index = int32_t(tree.nodes.size());
    tree.nodes.emplace_back();
    int32_t *begin = tree.order.data() + first, *end = begin + count;
    Vec3 lo{HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi{-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    Vec3 cornerLo = lo, cornerHi = hi;
    for (const int32_t *p = begin; p != end; ++p) {
      const Patch &patch = patches[size_t(*p)];
      lo = Min(lo, patch.centroid);
      hi = Max(hi, patch.centroid);
      Vec3 patchLo, patchHi;
      CornerBox(patch, patchLo, patchHi);
      cornerLo = Min(cornerLo, patchLo);
      cornerHi = Max(cornerHi, patchHi);
    }
    PatchTreeNode node;
    node.first = first;
    node.count = count;
    node.sphere.center = (cornerLo + cornerHi) * 0.5;
    node.boxLo = cornerLo;
    node.boxHi = cornerHi;
    node.sharedNormal = patches[size_t(*begin)].normal;
    node.sharedLow = HUGE_VAL;
    double area = 0;
    Vec3 weighted{0, 0, 0};
    for (const int32_t *p = begin; p != end; ++p) {
      const Patch &patch = patches[size_t(*p)];
      area += patch.area;
      weighted = weighted + patch.centroid * patch.area;
      if (patch.normal.x != node.sharedNormal.x || patch.normal.y != node.sharedNormal.y ||
          patch.normal.z != node.sharedNormal.z)
        node.sharedNormal = Vec3{0, 0, 0};
      for (int k = 0; k < patch.cornerCount; ++k) {
        node.sphere.radius = std::max(node.sphere.radius, Length(patch.corners[k] - node.sphere.center));
        node.sharedLow = std::min(node.sharedLow, Dot(node.sharedNormal, patch.corners[k]));
      }
      node.maxPatchRadius = std::max(node.maxPatchRadius, tree.patchSpheres[size_t(*p)].radius);
      node.maxPatchArea = std::max(node.maxPatchArea, patch.area);
    }
    if (!node.FacesOneWay()) node.sharedLow = 0;
    node.area = area;
    node.areaCentroid = area > 0 ? weighted / area : node.sphere.center;
    if (facingGroups) AddFacingGroups(begin, end, node);  // before the children's: each node's lie together
    if (count > leafSize) {
      int axis = 0;
      for (int a = 1; a < 3; ++a)
        if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
      int32_t *mid = begin + count / 2;
      std::nth_element(begin, mid, end, [&](int32_t a, int32_t b) {
        const double ca = patches[size_t(a)].centroid[axis], cb = patches[size_t(b)].centroid[axis];
        return ca < cb || (ca == cb && a < b);
      });
      node.left = Build(first, count / 2);
      node.right = Build(first + count / 2, count - count / 2);
    }
    tree.nodes[size_t(index)] = node;
    return index;
  }
};

}  // namespace

namespace {

// The tree's patch order (identity) and every patch's sphere, before any node.
PatchTree PatchesOnly(const std::vector<Patch> &patches) {
  PatchTree tree;
  const int32_t n = int32_t(patches.size());
  tree.order.resize(size_t(n));
  for (int32_t i = 0; i < n; ++i) tree.order[size_t(i)] = i;
  tree.patchSpheres.resize(size_t(n));
  for (int32_t i = 0; i < n; ++i) {
    const Patch &p = patches[size_t(i)];
    PatchSphere &s = tree.patchSpheres[size_t(i)];
    s.center = p.centroid;
    for (int k = 0; k < p.cornerCount; ++k) s.radius = std::max(s.radius, Length(p.corners[k] - p.centroid));
  }
  return tree;
}

}  // namespace

PatchTree BuildPatchTree(const std::vector<Patch> &patches, int leafSize) {
  PatchTree tree = PatchesOnly(patches);
  const int32_t n = int32_t(patches.size());
  if (n > 0) {
    tree.nodes.reserve(size_t(2 * (n / std::max(leafSize, 1) + 1)));
    Builder{patches, tree, std::max(leafSize, 1), true}.Build(0, n);
  }
  tree.points.reserve(size_t(n));
  for (int32_t j : tree.order) {
    const Patch &p = patches[size_t(j)];
    tree.points.push_back({p.centroid, p.normal, p.area});
  }
  return tree;
}

ElementForest BuildElementForest(const std::vector<Patch> &patches) {
  ElementForest forest;
  PatchTree &tree = forest.tree;
  tree = PatchesOnly(patches);
  const int32_t n = int32_t(patches.size());
  std::stable_sort(tree.order.begin(), tree.order.end(),
                   [&](int32_t a, int32_t b) { return patches[size_t(a)].face < patches[size_t(b)].face; });
  tree.nodes.reserve(size_t(2 * n));
  Builder builder{patches, tree, 1, false};
  for (int32_t first = 0; first < n;) {
    int32_t last = first + 1;
    while (last < n && patches[size_t(tree.order[size_t(last)])].face == patches[size_t(tree.order[size_t(first)])].face) ++last;
    forest.roots.push_back(builder.Build(first, last - first));
    first = last;
  }
  forest.parent.assign(tree.nodes.size(), -1);
  forest.leafOf.assign(size_t(n), -1);
  for (size_t k = 0; k < tree.nodes.size(); ++k) {
    const PatchTreeNode &node = tree.nodes[k];
    if (node.IsLeaf()) {
      forest.leafOf[size_t(tree.order[size_t(node.first)])] = int32_t(k);
    } else {
      forest.parent[size_t(node.left)] = int32_t(k);
      forest.parent[size_t(node.right)] = int32_t(k);
    }
  }
  return forest;
}

Patch ElementForest::Receiver(const std::vector<Patch> &patches, int32_t element) const {
  const PatchTreeNode &node = tree.nodes[size_t(element)];
  Patch r = patches[size_t(tree.order[size_t(node.first)])];
  r.centroid = node.areaCentroid;
  r.area = node.maxPatchArea;
  return r;
}

bool BehindPatch(const Patch &p, const PatchSphere &s) {
  return Dot(p.normal, s.center - p.centroid) <= -s.radius;
}

void CornerBox(const Patch &p, Vec3 &lo, Vec3 &hi) {
  lo = hi = p.corners[0];
  for (int k = 1; k < p.cornerCount; ++k) {
    lo = Min(lo, p.corners[k]);
    hi = Max(hi, p.corners[k]);
  }
}

namespace {

// The largest dot product of `direction` with a point of box [lo, hi].
double Support(const Vec3 &direction, const Vec3 &lo, const Vec3 &hi) {
  double most = Dot(direction, (lo + hi) * 0.5);
  for (int a = 0; a < 3; ++a) most += std::fabs(direction[a]) * 0.5 * (hi[a] - lo[a]);
  return most;
}

}  // namespace

bool NothingExchanged(const Patch &p, const Vec3 &lo, const Vec3 &hi, const PatchTreeNode &node) {
  if (BehindPatch(p, node.sphere)) return true;
  const double rounding = 1e-12 * (Length(node.sphere.center - p.centroid) + node.sphere.radius);
  if (Support(p.normal, node.boxLo, node.boxHi) - Dot(p.normal, p.centroid) <= rounding) return true;
  return node.FacesOneWay() && Support(node.sharedNormal, lo, hi) - node.sharedLow <= rounding;
}

namespace {

// A sphere whose sine of half-angle is s, seen from a point: its solid angle over pi, 2 (1 - cos), which
// bounds its cosine-weighted solid angle over pi with every cosine taken as 1.
double CapMeasure(double s) { return 2 * s * s / (1 + std::sqrt(std::max(0.0, 1 - s * s))); }

// The largest cosine with `normal` of a direction within an angle of sine `sinCone` of unit direction `w`.
double MaxCosine(Vec3 normal, Vec3 w, double sinCone) {
  const double c = Dot(normal, w), cosCone = std::sqrt(std::max(0.0, 1 - sinCone * sinCone));
  if (c >= cosCone) return 1;  // the normal is inside the cone
  return std::max(0.0, c * cosCone + std::sqrt(std::max(0.0, 1 - c * c)) * sinCone);  // cos(angle - cone)
}

// How a node lies from patch i inside sphere `a`, for NodeBound and NodeSumBound: the gap from a's centre to the
// node's sphere, the largest cosine at i towards the node, and the least distance between their points (gap -
// r_a); `apart` false when a comes within its own radius of the node (no bound then).
struct NodeReach {
  bool apart = false;
  double gap = 0, cosI = 0, least = 0;
};

NodeReach ReachOf(const Patch &i, const PatchSphere &a, const PatchTreeNode &node) {
  NodeReach reach;
  const Vec3 d = node.sphere.center - a.center;
  const double distance = Length(d);
  reach.gap = distance - node.sphere.radius;
  if (reach.gap <= a.radius) return reach;
  reach.apart = true;
  reach.cosI = MaxCosine(i.normal, d / distance, (a.radius + node.sphere.radius) / distance);
  reach.least = reach.gap - a.radius;
  return reach;
}

}  // namespace

double PairBound(const Patch &i, const PatchSphere &a, const Patch &j, const PatchSphere &b) {
  const Vec3 d = b.center - a.center;
  const double distance = Length(d);
  const double least = distance - a.radius - b.radius;
  if (least <= 0) return std::numeric_limits<double>::infinity();
  // From a point of a, b is at least distance - a.radius away, and every direction between them lies within
  // the cone of sine (a.radius + b.radius) / distance about d: F_ij <= cap * the largest cosine at i, and
  // alike the other way. And F_ij <= A_j times the kernel's largest value, cos_i cos_j / (pi least^2).
  const Vec3 w = d / distance;
  const double cone = (a.radius + b.radius) / distance;
  const double cosI = MaxCosine(i.normal, w, cone), cosJ = MaxCosine(j.normal, -1.0 * w, cone);
  const double cap = std::max(CapMeasure(b.radius / (distance - a.radius)) * cosI,
                              CapMeasure(a.radius / (distance - b.radius)) * cosJ);
  const double kernel = std::max(i.area, j.area) * cosI * cosJ / (kPi * least * least);
  return std::min(cap, kernel);
}

double NodeBound(const Patch &i, const PatchSphere &a, const PatchTreeNode &node) {
  // Every point of the node is at least `gap` from a's centre, and patch j's centre, whose sphere of radius r_j
  // lies inside the node's, at least gap + r_j: from a point of a, patch j's sphere has a sine of at most
  // r_j / (gap + r_j - r_a), largest for the largest r_j when gap > r_a; and from patch j, a's sphere at most
  // r_a / gap. The cosine at i is bounded over the cone that holds the node; the node's normals are not kept.
  // Or: points of the two are at least gap - r_a apart, so F <= max(A_i, A_j) cos_i / (pi (gap - r_a)^2).
  const NodeReach reach = ReachOf(i, a, node);
  if (!reach.apart) return std::numeric_limits<double>::infinity();
  const double r = node.maxPatchRadius, gap = reach.gap;
  const double cap = std::max(CapMeasure(r / (gap + r - a.radius)) * reach.cosI, CapMeasure(a.radius / gap));
  const double kernel = std::max(i.area, node.maxPatchArea) * reach.cosI / (kPi * reach.least * reach.least);
  return std::min(cap, kernel);
}

double NodeSumBound(const Patch &i, const PatchSphere &a, const PatchTreeNode &node) {
  // NodeBound's kernel bound, with the node's whole area in place of its largest patch's.
  const NodeReach reach = ReachOf(i, a, node);
  if (!reach.apart) return std::numeric_limits<double>::infinity();
  return node.area * reach.cosI / (kPi * reach.least * reach.least);
}

double PatchEstimate(const Patch &i, const Patch &j) { return PatchEstimate(i, PatchPoint{j.centroid, j.normal, j.area}); }

double PatchEstimate(const Patch &i, const PatchPoint &j) {
  const Vec3 d = j.centroid - i.centroid;
  const double r2 = LengthSquared(d);
  const double cosI = Dot(i.normal, d), cosJ = -Dot(j.normal, d);
  if (r2 <= 0 || cosI <= 0 || cosJ <= 0) return 0;
  return cosI * cosJ * j.area / (kPi * r2 * r2);
}

namespace {

// The kernel from patch i's centroid to point y of a group facing `direction`, times the group's area: its
// cosine at j is the group's axis component of -w, taken as 0 where the group faces away.
double GroupKernelAt(const Patch &i, int32_t direction, double area, const Vec3 &y) {
  const Vec3 d = y - i.centroid;
  const double r2 = LengthSquared(d);
  if (r2 <= 0) return 0;
  const double r = std::sqrt(r2);
  const double cosI = Dot(i.normal, d) / r;
  const double cosJ = (direction % 2 == 0 ? -d[direction / 2] : d[direction / 2]) / r;
  if (cosI <= 0 || cosJ <= 0) return 0;
  return cosI * cosJ * area / (kPi * r2);
}

}  // namespace

double ClusterEstimate(const PatchTree &tree, const Patch &i, const PatchTreeNode &node) {
  double sum = 0;
  for (int32_t g = node.groupFirst; g < node.groupFirst + node.groupCount; ++g) {
    const FacingGroup &group = tree.groups[size_t(g)];
    // The six points centre +- spread_k, a sixth each; a direction without spread counts the centre twice.
    double groupSum = 0, atCentre = -1;
    for (const auto &s : group.spread) {
      const Vec3 step{s[0], s[1], s[2]};
      if (step[0] == 0 && step[1] == 0 && step[2] == 0) {
        if (atCentre < 0) atCentre = GroupKernelAt(i, group.direction, group.area, group.centre);
        groupSum += 2 * atCentre;
      } else {
        groupSum += GroupKernelAt(i, group.direction, group.area, group.centre + step) +
                    GroupKernelAt(i, group.direction, group.area, group.centre - step);
      }
    }
    sum += groupSum / 6;
  }
  return sum;
}

double OpenedClusterEstimate(const PatchTree &tree, const Patch &i, int32_t node, double opening) {
  // Called for every node a row's walk skips: a stack on the stack, as the walk's (depth ~ log2(N / leaf size)).
  double sum = 0;
  int32_t stack[128];
  int top = 0;
  stack[top++] = node;
  while (top > 0) {
    const PatchTreeNode &n = tree.nodes[size_t(stack[--top])];
    if (n.sphere.radius < opening * Length(n.sphere.center - i.centroid)) {
      sum += ClusterEstimate(tree, i, n);
    } else if (n.IsLeaf()) {
      Prefetch(&tree.points[size_t(n.first)], size_t(n.count) * sizeof(PatchPoint));  // a run of lines, at once
      for (int32_t q = n.first; q < n.first + n.count; ++q) sum += PatchEstimate(i, tree.points[size_t(q)]);
    } else {
      stack[top++] = n.right;  // left first
      stack[top++] = n.left;
    }
  }
  return sum;
}

}  // namespace rad
