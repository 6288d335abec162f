// A bounding-sphere tree over the patches, for finding the pairs that matter without visiting every pair.
// Each node bounds a set of patches by a sphere and keeps their projected area towards the six axis directions,
// so that one test tells, for a patch i and a whole node:
//  - an upper bound on every entry F_ij and F_ji with j in the node (NodeBound): a sphere of radius r seen from a
//    point at distance d takes at most 2 (1 - cos asin(r/d)) (about (r/d)^2) of its cosine-weighted
//    hemisphere, times the largest cosine towards it, whatever is inside it, and
//    each patch of the node lies in a sphere of its own radius inside the node's (so the bound is that of the
//    node's largest patch at the node's nearest point, not that of the whole node: a far node of many small
//    patches is skipped even when its sum is not small); or, smaller where the cosines are, the kernel
//    cos_i cos_j / (pi r^2) at its largest over the two times the larger area;
//  - an estimate of sum_j F_ij over the node (ClusterEstimate): the point-to-point kernel from patch i's centroid
//    with the node's projected area, without occlusion, as hierarchical radiosity's clusters do, taken over
//    the node's patches grouped by the axis direction they face, each group at six points that have its
//    centre and spread (FacingGroup).
// The sparse operator (sparse_form_factors.h) skips a node whose bound is below its drop threshold: every
// entry in it would have been dropped anyway, so the cost follows the entries kept, not N^2.
#pragma once

#include <cstdint>
#include <vector>

#include "scene/patch.h"

namespace rad {

struct PatchSphere {
  Vec3 center;
  double radius = 0;
};

// A node's patches that face one axis direction (+x, -x, +y, -y, +z, -z), each weighted by its area projected
// along that axis, A_j max(0, +-n_j.axis): a patch whose normal lies between axes is in two or three groups, and
// its kernel's cosine at j, -n_j.w, is the sum of its groups' (-+w.axis) wherever it faces the receiver.
// Measured over boxes of patches a tenth of their distance wide in a closed room of 7776 patches, against the
// sum of their point kernels: the node's one projected area at its area-weighted centre was 2.5 % low where a
// box turns a corner (the floor's patches taken at the wall's centre) and 0.24 % high on a plane (the kernel's
// curvature); each group's six points, 1e-6. In that room the far links' mean error per row (row sums are 1
// exactly) fell from 4.3e-4 to 7.5e-5, what the patches' own centroid kernel leaves, when rows took every link
// themselves.
struct FacingGroup {
  Vec3 centre{0, 0, 0};  // the weighted mean of the centroids
  double area = 0;       // the sum of the weights: the node's area projected along the axis
  // Three vectors whose outer products sum to 3 times the weighted covariance of the centroids about `centre`
  // (a Cholesky factor, scaled), so that the six points centre +- spread_k, a sixth of the area each, have the
  // group's first and second moments. In float: they only place those points.
  float spread[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  int32_t direction = 0;  // 2 axis + 1 for the negative direction, as the patches' normals point
};

struct PatchTreeNode {
  PatchSphere sphere;             // holds every corner of its patches
  Vec3 boxLo{0, 0, 0}, boxHi{0, 0, 0};  // and so does this box: flat where its patches lie in one axis plane
  // The normal its patches share when they all face the same way (0 when they do not), and the least of its dot
  // products with their corners: the plane of its lowest patch (NothingExchanged).
  Vec3 sharedNormal{0, 0, 0};
  double sharedLow = 0;
  double maxPatchRadius = 0;      // the largest of its patches' spheres
  double maxPatchArea = 0;        // and of its patches' areas
  double area = 0;                // the sum of its patches' areas
  int32_t groupFirst = 0, groupCount = 0;  // its FacingGroups: PatchTree::groups[first, first + count)
  Vec3 areaCentroid{0, 0, 0};     // the area-weighted mean of its patches' centroids
  int32_t first = 0, count = 0;  // its patches: PatchTree::order[first, first + count)
  int32_t left = -1, right = -1;  // children, -1 for a leaf
  bool IsLeaf() const { return left < 0; }
  bool FacesOneWay() const { return sharedNormal.x != 0 || sharedNormal.y != 0 || sharedNormal.z != 0; }
};

// What the estimates read of a patch.
struct PatchPoint {
  Vec3 centroid;
  Vec3 normal;
  double area = 0;
};

struct PatchTree {
  std::vector<PatchTreeNode> nodes;  // nodes[0] is the root (absent when there are no patches)
  std::vector<int32_t> order;        // patch indices, each node's a contiguous range
  std::vector<PatchSphere> patchSpheres;  // per patch (by patch index): centroid and farthest corner
  // Per place of `order` (BuildPatchTree's trees): that patch's point, so that a node's patches lie together.
  // Read through the patch array, where they lie scattered, each cost a cache miss: the estimates over the
  // patches of opened nodes were a tenth of a 102096-patch city's run, 70 % of it on their first load.
  std::vector<PatchPoint> points;
  std::vector<FacingGroup> groups;  // BuildPatchTree's trees: each node's, together (ElementForest: none)
};

// Node k's sum of value(j) over its patches j, the one rule every such sum follows: a leaf's in the tree's
// order, any other node's as childSum(left) + childSum(right). Taken bottom-up (children before parents:
// BuildPatchTree builds a node's children after it), a node's sum then has the same bits wherever it is
// taken, from whichever children's sums: the node areas (far_links.cpp) and the solver's node sums of B, which
// ranks take part by part (solver/read_exchange.cpp), agree to the bit.
template <typename Value, typename ChildSum>
double BottomUpNodeSum(const PatchTree &tree, size_t k, Value &&value, ChildSum &&childSum) {
  const PatchTreeNode &node = tree.nodes[k];
  if (!node.IsLeaf()) return childSum(size_t(node.left)) + childSum(size_t(node.right));
  double s = 0;
  for (int32_t q = node.first; q < node.first + node.count; ++q) s += value(size_t(tree.order[size_t(q)]));
  return s;
}

// Median splits of the centroids along the longest axis of their box, down to `leafSize` patches; the same
// patches give the same tree (ties broken by patch index).
PatchTree BuildPatchTree(const std::vector<Patch> &patches, int leafSize = 8);

// The receivers' side of the hierarchical operator: inside every face (one input polygon, one plane), a tree
// over its patches down to single patches, so that a whole element of a polygon can take a far link that each
// of its patches would have taken alike. All faces' trees in one PatchTree (its order: patches face by face).
struct ElementForest {
  PatchTree tree;               // leaves hold one patch each
  std::vector<int32_t> roots;   // per face with patches, its tree's root
  std::vector<int32_t> parent;  // per node, -1 at a root
  std::vector<int32_t> leafOf;  // per patch, its leaf
  // The element's first patch in the forest's order: the rank that has it as a row counts and writes the
  // element's links (every rank with a row below the element holds them).
  int32_t FirstPatch(int32_t element) const { return tree.order[size_t(tree.nodes[size_t(element)].first)]; }
  // A stand-in patch for the element: its area-weighted centre, its face's plane and normal, the area of its
  // largest patch (what NodeBound asks of a receiver).
  Patch Receiver(const std::vector<Patch> &patches, int32_t element) const;
};

// Median splits as BuildPatchTree, face by face, down to one patch per leaf.
ElementForest BuildElementForest(const std::vector<Patch> &patches);

// True when the whole sphere lies behind patch p's plane (p sees nothing in it, and by reciprocity nothing in
// it sees p).
bool BehindPatch(const Patch &p, const PatchSphere &s);

// The box of patch p's corners.
void CornerBox(const Patch &p, Vec3 &lo, Vec3 &hi);

// True when every entry between a receiver and every patch of `node` is 0, the receiver being patch p, or an
// element of patches on p's plane (p its stand-in), inside box [lo, hi]: when the node lies behind that plane
// or in it (its sphere, or its box), or when its patches all face one way and the receiver's box lies behind or
// in the plane of the lowest of them, so that neither end faces the other. To rounding: within 1e-12 of their
// distance. The boxes catch what the spheres cannot: the patches that share p's plane (the rest of a floor or a
// street seen from one of its patches), and those that face away from it from just beside it (a wall seen from
// the street in front of the next one), whose spheres the plane cuts in half. Before, each such node was
// estimated (0), its samples' patches read, handed down to both halves of the element to be tried again, down
// to the rows, whose walks opened it to its patches, each a candidate of an exact entry that came out 0. On an
// 8 x 8 city split to 0.5 (N = 24272) the elements' link attempts fell from 8.10 M to 4.27 M, those whose
// estimate was 0 from 4.99 M to 1.17 M; split to 0.25 (N = 93968) the run took 0.76x and 0.87x as long.
bool NothingExchanged(const Patch &p, const Vec3 &lo, const Vec3 &hi, const PatchTreeNode &node);

// An upper bound on max(F_ij, F_ji) for patches i and j, inside spheres `a` and `b`: the smaller of the cap
// bound above and of max(A_i, A_j) times the largest cosines at both ends over (pi times the least distance
// squared), the kernel's largest value times the area; +infinity when the spheres touch or overlap.
double PairBound(const Patch &i, const PatchSphere &a, const Patch &j, const PatchSphere &b);

// An upper bound on max(F_ij, F_ji) for patch i inside sphere `a` and every patch j of `node` (the cap bound,
// or the area bound with the node's largest patch and no cosine at j's end); +infinity when `a` comes within
// its own radius of the node's sphere.
double NodeBound(const Patch &i, const PatchSphere &a, const PatchTreeNode &node);

// An upper bound on sum_j F_ij over every patch j of `node` for patch i inside sphere `a`, without occlusion:
// the node's area times the kernel's largest value, cos_i / (pi least^2) (no cosine at j's end); +infinity when
// `a` comes within its own radius of the node's sphere. What a far link to the node can carry at most.
double NodeSumBound(const Patch &i, const PatchSphere &a, const PatchTreeNode &node);

// F_ij estimated from the centroids without occlusion (the point-to-point kernel times A_j).
double PatchEstimate(const Patch &i, const PatchPoint &j);
double PatchEstimate(const Patch &i, const Patch &j);

// sum over j in `node` of `tree` of F_ij, estimated without occlusion from its FacingGroups: the kernel from
// patch i's centroid times each group's area at the six points of the group's spread (each point behind i or
// facing away counting 0), exact to second order in the node's size over its distance.
double ClusterEstimate(const PatchTree &tree, const Patch &i, const PatchTreeNode &node);

// sum_j F_ij over node `node` of `tree` estimated as above, but opening every node whose sphere is larger than
// `opening` times its distance from patch i (down to single patches at the leaves): the cluster estimate is
// the kernel at one point, and across a node seen under a wide angle the kernel changes by order one.
double OpenedClusterEstimate(const PatchTree &tree, const Patch &i, int32_t node, double opening);

}  // namespace rad
