#include "refine/patch_neighbours.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "formfactor/patch_tree.h"

namespace rad {

namespace {

double PointSegmentDistance(Vec3 p, Vec3 a, Vec3 b) {
  const Vec3 ab = b - a;
  const double length2 = LengthSquared(ab);
  const double t = length2 > 0 ? std::clamp(Dot(p - a, ab) / length2, 0.0, 1.0) : 0.0;
  return Length(p - (a + ab * t));
}

// Some corner of `a` within `tolerance` of an edge of `b`.
bool CornerOnBoundary(const Patch &a, const Patch &b, double tolerance) {
  for (int k = 0; k < a.cornerCount; ++k)
    for (int e = 0; e < b.cornerCount; ++e)
      if (PointSegmentDistance(a.corners[k], b.corners[e], b.corners[(e + 1) % b.cornerCount]) <= tolerance)
        return true;
  return false;
}

bool SamePlaneAndMaterial(const Patch &a, const Patch &b, double tolerance) {
  return Dot(a.normal, b.normal) > 1 - 1e-9 && std::abs(Dot(a.normal, b.centroid - a.centroid)) <= tolerance &&
         a.reflectance.x == b.reflectance.x && a.reflectance.y == b.reflectance.y &&
         a.reflectance.z == b.reflectance.z && a.emission.x == b.emission.x && a.emission.y == b.emission.y &&
         a.emission.z == b.emission.z;
}

// A millionth of the larger patch's size: rounding in the corners' positions, far below any patch.
double TouchTolerance(const Patch &a, const Patch &b) { return 1e-6 * std::max(LongestEdge(a), LongestEdge(b)); }

}  // namespace

bool PatchesTouch(const Patch &a, const Patch &b, double tolerance) {
  return CornerOnBoundary(a, b, tolerance) || CornerOnBoundary(b, a, tolerance);
}

std::vector<std::vector<int32_t>> PatchNeighbours(const std::vector<Patch> &patches) {
  std::vector<std::vector<int32_t>> neighbours(patches.size());
  if (patches.empty()) return neighbours;
  const PatchTree tree = BuildPatchTree(patches);
  tbb::parallel_for(size_t(0), patches.size(), [&](size_t i) {
    const Patch &p = patches[i];
    const PatchSphere &s = tree.patchSpheres[i];
    std::vector<int32_t> stack{0};
    while (!stack.empty()) {
      const PatchTreeNode &node = tree.nodes[size_t(stack.back())];
      stack.pop_back();
      // Spheres hold their patches' corners: touching patches have overlapping spheres.
      const double reach = s.radius + node.sphere.radius;
      if (Length(node.sphere.center - s.center) > reach * (1 + 1e-5)) continue;  // with room for the tolerance
      if (!node.IsLeaf()) {
        stack.push_back(node.left);
        stack.push_back(node.right);
        continue;
      }
      for (int32_t k = node.first; k < node.first + node.count; ++k) {
        const int32_t j = tree.order[size_t(k)];
        if (size_t(j) == i) continue;
        const Patch &q = patches[size_t(j)];
        const double tolerance = TouchTolerance(p, q);
        if (SamePlaneAndMaterial(p, q, tolerance) && PatchesTouch(p, q, tolerance)) neighbours[i].push_back(j);
      }
    }
    std::sort(neighbours[i].begin(), neighbours[i].end());
  });
  return neighbours;
}

}  // namespace rad
