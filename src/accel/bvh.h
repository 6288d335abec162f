// The project's own bounding-volume hierarchy over triangles, for tracing rays where Embree cannot go (the GPU).
// Built on the host by Embree's BVH builder (bvh_builder.h), flattened into plain arrays, and traversed by the
// same code on host and device (bvh_traversal.h), so that this CPU-only machine can test the GPU's traversal
// against Embree ray by ray.
//
// Node layout: a binary BVH whose nodes hold the boxes of BOTH children, not their own (Aila & Laine 2009,
// "Understanding the efficiency of ray traversal on GPUs"). One node visit is then one 64-byte load (four
// 16-byte vector loads, half a 128-byte cache line) that tests both children at once and picks the nearer one
// to visit first; with one box per node, choosing the order would take a second dependent memory round trip to
// both children. Leaves are not nodes: a child slot points straight at its run of triangles, which saves the
// visit of a leaf node. A tree whose root is a leaf (one triangle, or few) becomes one node with that leaf in
// slot 0 and an empty slot 1. No triangles: no nodes at all, and traversal finds nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace rad {

// A point or direction in single precision: what rays are made of on both sides, like Embree's rays.
struct Float3 {
  float x = 0, y = 0, z = 0;
};

// Input triangle. Single precision, like the vertex buffers of the project's Embree scenes, so that Embree and
// this BVH test the same numbers.
struct BvhTriangle {
  float v0[3], v1[3], v2[3];
  int32_t id;  // the caller's id, reported by hits: the input polygon (shadow rays) or the patch (renderer)
};

struct alignas(16) BvhNode {
  // Boxes of the two children, per axis and child: lo[axis][child], hi[axis][child]. An empty slot has
  // lo = +inf and hi = -inf, which no ray enters.
  float lo[3][2];
  float hi[3][2];
  // child[k] >= 0: index of an inner node. child[k] < 0: a leaf of count[k] triangles starting at triangle
  // -1 - child[k] (~child[k]). count is 0 for inner nodes and for an empty slot.
  int32_t child[2];
  int32_t count[2];
};
static_assert(sizeof(BvhNode) == 64, "a node is four 16-byte loads");

// A triangle as stored in the leaves: vertices padded to 16 bytes each (three vector loads on a GPU), the
// caller's id and the triangle's index in the builder's input in the padding.
struct alignas(16) BvhPackedTriangle {
  float v0[3];
  int32_t id;
  float v1[3];
  int32_t input;  // index into the vector given to BuildBvh
  float v2[3];
  float unused;
};
static_assert(sizeof(BvhPackedTriangle) == 48, "a triangle is three 16-byte loads");

// What traversal needs, as raw pointers: host pointers from FlatBvh::View, device pointers from DeviceBvh.
struct BvhView {
  const BvhNode *nodes = nullptr;
  const BvhPackedTriangle *triangles = nullptr;
  int32_t nodeCount = 0;  // 0: no triangles
  int32_t triangleCount = 0;
};

struct FlatBvh {
  std::vector<BvhNode> nodes;                // node 0 is the root; a parent precedes its children (depth first)
  std::vector<BvhPackedTriangle> triangles;  // in leaf order; a triangle split by the builder may repeat
  int depth = 0;                             // nodes on the longest root-to-leaf path

  BvhView View() const {
    BvhView v;
    v.nodes = nodes.data();
    v.triangles = triangles.data();
    v.nodeCount = int32_t(nodes.size());
    v.triangleCount = int32_t(triangles.size());
    return v;
  }
};

// Rays as batches of them travel to a device: origin, direction (any length) and the interval (tnear, tfar].
struct BvhRay {
  Float3 org, dir;
  float tnear = 0, tfar = 0;
};

}  // namespace rad
