// The convention every shadow-ray tracer of the project shares (Embree on the CPU, the project's BVH on the
// GPU), kept in a header that device code can include.
#pragma once

namespace rad {

// Relative trim of shadow segments, in units of the segment's length: a segment from `from` to `to` is traced
// as the ray from + t (to - from) over (kSegmentTrim, 1 - kSegmentTrim], so that the polygons it starts and
// ends on never count as blockers.
constexpr float kSegmentTrim = 1e-5f;

}  // namespace rad
