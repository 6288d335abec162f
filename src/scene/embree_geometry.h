// Embree geometries made the same way wherever the project traces rays with Embree: the input polygons as
// triangles (shadow rays of the form factors, the path tracer) and the patches as quads (the renderers). Both
// are made on the process's device (util/embree_util.h).
#pragma once

#include "util/rtcore.h"

#include <vector>

#include "scene/patch.h"
#include "scene/scene.h"
#include "util/vec3.h"

namespace rad {

// The input polygons fan-split into triangles (scene/face_triangles.h), in face order, single-precision vertices.
// Returned filled but not committed, so the caller can set filter functions first.
RTCGeometry NewFaceTriangles(const Scene &scene);

// The patches as one quad geometry, primitive i = patch i, for the renderers that trace camera rays against
// patches (the radiosity renderer, instant radiosity).
// Adds the geometry to `scene` (which the caller commits). Corners are stored in single precision relative to
// `origin`, so a renderer that puts its camera there resolves the scene best where it looks. A triangle is a
// quad whose last two corners coincide, which Embree accepts (only its first half, v0 v1 v3, has area).
void AttachPatchQuads(RTCScene scene, const std::vector<Patch> &patches, Vec3 origin = Vec3());

}  // namespace rad
