#include "accel/bvh_builder.h"

#include "util/rtcore.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <string>

#include "accel/bvh_traversal.h"
#include "scene/face_triangles.h"
#include "util/embree_util.h"
#include "util/error.h"

namespace rad {

namespace {

// Leaves of up to this many triangles; SAH picks smaller ones where they pay.
constexpr unsigned kMaxLeafSize = 4;
// Embree starts making large leaves 8 levels before its maxDepth; keep the tree within traversal's stack.
constexpr unsigned kMaxBuildDepth = kBvhStackSize - 8;

// The temporary tree Embree builds through our callbacks, in memory of Embree's thread-local allocator (freed
// with the RTCBVH). Trivially destructible on purpose: nothing ever calls a destructor.
struct BuildNode {
  bool leaf = false;
  unsigned count = 0;                    // children (inner) or primitives (leaf)
  BuildNode *child[2] = {nullptr, nullptr};
  RTCBounds bounds[2];
  uint32_t *prims = nullptr;             // leaf: input triangle indices, right after the node in memory
};

void *CreateNode(RTCThreadLocalAllocator alloc, unsigned childCount, void *) {
  if (childCount > 2) RAD_FATAL("rtcBuildBVH asked for a node of " + std::to_string(childCount) + " children");
  void *mem = rtcThreadLocalAlloc(alloc, sizeof(BuildNode), alignof(BuildNode));
  auto *node = new (mem) BuildNode;
  node->count = childCount;
  return node;
}

void SetNodeChildren(void *nodePtr, void **children, unsigned childCount, void *) {
  auto *node = static_cast<BuildNode *>(nodePtr);
  for (unsigned k = 0; k < childCount; ++k) node->child[k] = static_cast<BuildNode *>(children[k]);
}

void SetNodeBounds(void *nodePtr, const RTCBounds **bounds, unsigned childCount, void *) {
  auto *node = static_cast<BuildNode *>(nodePtr);
  for (unsigned k = 0; k < childCount; ++k) node->bounds[k] = *bounds[k];
}

void *CreateLeaf(RTCThreadLocalAllocator alloc, const RTCBuildPrimitive *prims, size_t count, void *) {
  void *mem = rtcThreadLocalAlloc(alloc, sizeof(BuildNode) + count * sizeof(uint32_t), alignof(BuildNode));
  auto *node = new (mem) BuildNode;
  node->leaf = true;
  node->count = unsigned(count);
  node->prims = reinterpret_cast<uint32_t *>(static_cast<char *>(mem) + sizeof(BuildNode));
  for (size_t k = 0; k < count; ++k) node->prims[k] = prims[k].primID;
  // Embree's parallel partitioning may order a leaf's primitives differently from run to run.
  std::sort(node->prims, node->prims + count);
  return node;
}

// Rounds outward, so that float boxes made from double coordinates still contain them.
float FloatBelow(double x) {
  const float f = float(x);
  return double(f) <= x ? f : std::nextafter(f, -std::numeric_limits<float>::infinity());
}
float FloatAbove(double x) {
  const float f = float(x);
  return double(f) >= x ? f : std::nextafter(f, std::numeric_limits<float>::infinity());
}

struct BoxD {
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
  double hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  void Extend(const double p[3]) {
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p[a]), hi[a] = std::max(hi[a], p[a]);
  }
};

// Spatial split of one reference: the boxes of the parts of its triangle on either side of the plane
// x[dim] = pos, each clipped to the reference's current box (earlier splits may have cut it already). Without
// this callback a split could only halve the box, which would not tighten it around the triangle.
void SplitPrimitive(const RTCBuildPrimitive *prim, unsigned dim, float pos, RTCBounds *left, RTCBounds *right,
                    void *user) {
  const auto &tri = (*static_cast<const std::vector<BvhTriangle> *>(user))[prim->primID];
  double p[3][3];
  for (int a = 0; a < 3; ++a) p[0][a] = tri.v0[a], p[1][a] = tri.v1[a], p[2][a] = tri.v2[a];
  BoxD l, r;
  for (int i = 0; i < 3; ++i) {
    const double *a = p[i], *b = p[(i + 1) % 3];
    if (a[dim] <= pos) l.Extend(a);
    if (a[dim] >= pos) r.Extend(a);
    if ((a[dim] < pos && b[dim] > pos) || (a[dim] > pos && b[dim] < pos)) {
      const double s = (pos - a[dim]) / (b[dim] - a[dim]);
      double c[3];
      for (int k = 0; k < 3; ++k) c[k] = a[k] + s * (b[k] - a[k]);
      c[dim] = pos;
      l.Extend(c);
      r.Extend(c);
    }
  }
  const float primLo[3] = {prim->lower_x, prim->lower_y, prim->lower_z};
  const float primHi[3] = {prim->upper_x, prim->upper_y, prim->upper_z};
  float out[2][2][3];  // [side][lo/hi][axis]
  const BoxD *sides[2] = {&l, &r};
  for (int s = 0; s < 2; ++s) {
    for (int a = 0; a < 3; ++a) {
      float lo = std::max(primLo[a], FloatBelow(sides[s]->lo[a]));
      float hi = std::min(primHi[a], FloatAbove(sides[s]->hi[a]));
      if (a == int(dim)) {
        if (s == 0) hi = std::min(hi, pos);
        else lo = std::max(lo, pos);
      }
      // The triangle misses this side within the reference's box: a valid, flat box inside it. The reference
      // then costs a little traversal time and is never wrong.
      if (!(lo <= hi)) lo = hi = std::min(std::max(pos, primLo[a]), primHi[a]);
      out[s][0][a] = lo;
      out[s][1][a] = hi;
    }
  }
  RTCBounds *dst[2] = {left, right};
  for (int s = 0; s < 2; ++s) {
    dst[s]->lower_x = out[s][0][0], dst[s]->lower_y = out[s][0][1], dst[s]->lower_z = out[s][0][2];
    dst[s]->upper_x = out[s][1][0], dst[s]->upper_y = out[s][1][1], dst[s]->upper_z = out[s][1][2];
    dst[s]->align0 = dst[s]->align1 = 0;
  }
}

BvhPackedTriangle Pack(const BvhTriangle &t, uint32_t input) {
  BvhPackedTriangle p;
  for (int a = 0; a < 3; ++a) p.v0[a] = t.v0[a], p.v1[a] = t.v1[a], p.v2[a] = t.v2[a];
  p.id = t.id;
  p.input = int32_t(input);
  p.unused = 0;
  return p;
}

void SetSlot(BvhNode &node, int k, const RTCBounds &b) {
  node.lo[0][k] = b.lower_x, node.lo[1][k] = b.lower_y, node.lo[2][k] = b.lower_z;
  node.hi[0][k] = b.upper_x, node.hi[1][k] = b.upper_y, node.hi[2][k] = b.upper_z;
}

void SetEmptySlot(BvhNode &node, int k) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int a = 0; a < 3; ++a) node.lo[a][k] = inf, node.hi[a][k] = -inf;
  node.child[k] = -1;
  node.count[k] = 0;
}

// Appends a leaf's triangles and points slot k of `node` at them.
void SetLeaf(FlatBvh &out, BvhNode &node, int k, const BuildNode &leaf, const std::vector<BvhTriangle> &in) {
  RAD_CHECK(out.triangles.size() + leaf.count <= size_t(std::numeric_limits<int32_t>::max()),
            "BuildBvh: too many triangle references for 32-bit indices");
  node.child[k] = ~int32_t(out.triangles.size());
  node.count[k] = int32_t(leaf.count);
  for (unsigned i = 0; i < leaf.count; ++i) out.triangles.push_back(Pack(in[leaf.prims[i]], leaf.prims[i]));
}

RTCBounds TriangleBounds(const BvhTriangle &t) {
  RTCBounds b;
  b.lower_x = std::min({t.v0[0], t.v1[0], t.v2[0]});
  b.lower_y = std::min({t.v0[1], t.v1[1], t.v2[1]});
  b.lower_z = std::min({t.v0[2], t.v1[2], t.v2[2]});
  b.upper_x = std::max({t.v0[0], t.v1[0], t.v2[0]});
  b.upper_y = std::max({t.v0[1], t.v1[1], t.v2[1]});
  b.upper_z = std::max({t.v0[2], t.v1[2], t.v2[2]});
  b.align0 = b.align1 = 0;
  return b;
}

// Depth-first, a parent before its first child before its second: the near child of a visit is usually the
// next node in memory.
FlatBvh Flatten(const BuildNode *root, const std::vector<BvhTriangle> &in) {
  FlatBvh out;
  if (root->leaf) {
    BvhNode node;
    RTCBounds b = TriangleBounds(in[root->prims[0]]);
    for (unsigned i = 1; i < root->count; ++i) {
      const RTCBounds t = TriangleBounds(in[root->prims[i]]);
      b.lower_x = std::min(b.lower_x, t.lower_x), b.lower_y = std::min(b.lower_y, t.lower_y);
      b.lower_z = std::min(b.lower_z, t.lower_z), b.upper_x = std::max(b.upper_x, t.upper_x);
      b.upper_y = std::max(b.upper_y, t.upper_y), b.upper_z = std::max(b.upper_z, t.upper_z);
    }
    SetSlot(node, 0, b);
    SetLeaf(out, node, 0, *root, in);
    SetEmptySlot(node, 1);
    out.nodes.push_back(node);
    out.depth = 1;
    return out;
  }
  struct Item {
    const BuildNode *node;
    int32_t parent;  // -1 for the root
    int slot;
    int depth;
  };
  std::vector<Item> stack{{root, -1, 0, 1}};
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    RAD_CHECK(out.nodes.size() < size_t(std::numeric_limits<int32_t>::max()), "BuildBvh: too many nodes");
    const int32_t index = int32_t(out.nodes.size());
    out.nodes.emplace_back();
    if (item.parent >= 0) out.nodes[size_t(item.parent)].child[item.slot] = index;
    out.depth = std::max(out.depth, item.depth);
    const BuildNode &b = *item.node;
    for (int k = 1; k >= 0; --k) {  // slot 1 pushed first so that slot 0 is flattened next
      BvhNode &node = out.nodes[size_t(index)];
      if (unsigned(k) >= b.count || !b.child[k]) {
        SetEmptySlot(node, k);
        continue;
      }
      SetSlot(node, k, b.bounds[k]);
      node.count[k] = 0;
      if (b.child[k]->leaf) {
        SetLeaf(out, node, k, *b.child[k], in);
      } else {
        node.child[k] = -1;  // set when the child is flattened
        stack.push_back({b.child[k], index, k, item.depth + 1});
      }
    }
  }
  return out;
}

}  // namespace

FlatBvh BuildBvh(const std::vector<BvhTriangle> &triangles, BvhQuality quality) {
  if (triangles.empty()) return FlatBvh();
  RAD_CHECK(triangles.size() <= size_t(std::numeric_limits<int32_t>::max()) / 2,
            "BuildBvh: too many triangles for 32-bit indices");
  const bool splits = quality == BvhQuality::kHigh;
  // Room for the references spatial splits add; Embree writes them after the first `size()` entries.
  std::vector<RTCBuildPrimitive> prims(splits ? 2 * triangles.size() : triangles.size());
  for (size_t i = 0; i < triangles.size(); ++i) {
    const RTCBounds b = TriangleBounds(triangles[i]);
    RTCBuildPrimitive &p = prims[i];
    p.lower_x = b.lower_x, p.lower_y = b.lower_y, p.lower_z = b.lower_z;
    p.upper_x = b.upper_x, p.upper_y = b.upper_y, p.upper_z = b.upper_z;
    p.geomID = 0;
    p.primID = unsigned(i);
  }

  RTCBVH bvh = rtcNewBVH(EmbreeDevice());
  RTCBuildArguments args = rtcDefaultBuildArguments();
  args.byteSize = sizeof(args);
  args.buildQuality = splits ? RTC_BUILD_QUALITY_HIGH : RTC_BUILD_QUALITY_MEDIUM;
  args.buildFlags = RTC_BUILD_FLAG_NONE;
  args.maxBranchingFactor = 2;
  args.maxDepth = kMaxBuildDepth;
  args.sahBlockSize = 1;
  args.minLeafSize = 1;
  args.maxLeafSize = kMaxLeafSize;
  // A node visit tests two boxes in one load; a triangle test costs about as much.
  args.traversalCost = 1.0f;
  args.intersectionCost = 1.0f;
  args.bvh = bvh;
  args.primitives = prims.data();
  args.primitiveCount = triangles.size();
  args.primitiveArrayCapacity = prims.size();
  args.createNode = CreateNode;
  args.setNodeChildren = SetNodeChildren;
  args.setNodeBounds = SetNodeBounds;
  args.createLeaf = CreateLeaf;
  args.splitPrimitive = splits ? SplitPrimitive : nullptr;
  args.buildProgress = nullptr;
  args.userPtr = const_cast<std::vector<BvhTriangle> *>(&triangles);
  const auto *root = static_cast<const BuildNode *>(rtcBuildBVH(&args));
  RAD_CHECK(root != nullptr, "rtcBuildBVH returned no tree");
  FlatBvh out = Flatten(root, triangles);
  rtcReleaseBVH(bvh);
  // Traversal keeps one pending child per level on its stack.
  RAD_CHECK(out.depth <= kBvhStackSize,
            "BuildBvh: tree depth " + std::to_string(out.depth) + " exceeds the traversal stack");
  return out;
}

std::vector<BvhTriangle> SceneTriangles(const Scene &scene) {
  std::vector<BvhTriangle> out;
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const Face &face = scene.faces[f];
    for (size_t k = 0; k < FaceTriangleCount(face); ++k) {
      size_t corner[3];
      FaceTriangleCorners(k, corner);
      BvhTriangle t;
      float *v[3] = {t.v0, t.v1, t.v2};
      for (int c = 0; c < 3; ++c) {
        const Vec3 &p = face.corners[corner[c]];
        v[c][0] = float(p.x), v[c][1] = float(p.y), v[c][2] = float(p.z);
      }
      t.id = int32_t(f);
      out.push_back(t);
    }
  }
  return out;
}

std::vector<BvhTriangle> PatchTriangles(const std::vector<Patch> &patches, Vec3 origin) {
  RAD_CHECK(patches.size() <= size_t(std::numeric_limits<int32_t>::max()), "PatchTriangles: too many patches");
  std::vector<BvhTriangle> out;
  out.reserve(2 * patches.size());
  auto add = [&](const Patch &p, int a, int b, int c, size_t id) {
    BvhTriangle t;
    float *v[3] = {t.v0, t.v1, t.v2};
    const int k[3] = {a, b, c};
    for (int i = 0; i < 3; ++i) {
      const Vec3 q = p.corners[k[i]] - origin;
      v[i][0] = float(q.x), v[i][1] = float(q.y), v[i][2] = float(q.z);
    }
    t.id = int32_t(id);
    out.push_back(t);
  };
  for (size_t i = 0; i < patches.size(); ++i) {
    const Patch &p = patches[i];
    if (p.cornerCount == 3) {
      add(p, 0, 1, 2, i);
    } else {
      add(p, 0, 1, 3, i);
      add(p, 2, 3, 1, i);
    }
  }
  return out;
}

}  // namespace rad
