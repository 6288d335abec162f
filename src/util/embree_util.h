// What every Embree user in the project does the same way: one device per process, whose errors are fatal
// (registered right after rtcNewDevice, as Embree's tutorials do), ray records with every field set, and the ray
// queries, the same calls for Embree 3 and Embree 4 (util/rtcore.h).
#pragma once

#include "util/rtcore.h"

#include "util/vec3.h"

namespace rad {

// The process's Embree device, with the project's error callback (RAD_FATAL): made on first use (by any
// thread), released at exit. Every scene, geometry and BVH of the program is made on it; callers do not release it.
RTCDevice EmbreeDevice();

// A ray from `origin` along `direction` over [tnear, tfar], mask all ones, no time or flags.
RTCRay MakeRay(Vec3 origin, Vec3 direction, float tnear, float tfar);

// The same ray with an empty hit record, for rtcIntersect1.
RTCRayHit MakeRayHit(Vec3 origin, Vec3 direction, float tnear, float tfar);

// The context of one ray query: Embree 3's RTCIntersectContext, Embree 4's RTCRayQueryContext. Filter and user
// geometry callbacks get a pointer to it, so a struct that starts with one carries the query's own data to them.
#if RAD_EMBREE_MAJOR >= 4
using EmbreeQueryContext = RTCRayQueryContext;
inline void InitQueryContext(EmbreeQueryContext *context) { rtcInitRayQueryContext(context); }
#else
using EmbreeQueryContext = RTCIntersectContext;
inline void InitQueryContext(EmbreeQueryContext *context) { rtcInitIntersectContext(context); }
#endif

// rtcIntersect1, rtcOccluded1 and rtcOccluded16 with `context` (null: a fresh one) in either version; Embree 4
// takes the context, and the coherence hint, in an arguments record instead of as a parameter.
inline void Intersect1(RTCScene scene, EmbreeQueryContext *context, RTCRayHit *rayhit) {
  EmbreeQueryContext fresh;
  if (context == nullptr) InitQueryContext(context = &fresh);
#if RAD_EMBREE_MAJOR >= 4
  RTCIntersectArguments args;
  rtcInitIntersectArguments(&args);
  args.context = context;
  rtcIntersect1(scene, rayhit, &args);
#else
  rtcIntersect1(scene, context, rayhit);
#endif
}

inline void Occluded1(RTCScene scene, EmbreeQueryContext *context, RTCRay *ray) {
  EmbreeQueryContext fresh;
  if (context == nullptr) InitQueryContext(context = &fresh);
#if RAD_EMBREE_MAJOR >= 4
  RTCOccludedArguments args;
  rtcInitOccludedArguments(&args);
  args.context = context;
  rtcOccluded1(scene, ray, &args);
#else
  rtcOccluded1(scene, context, ray);
#endif
}

// A packet of rays that start close together and run alike (Embree's coherent hint).
inline void OccludedCoherent16(const int *valid, RTCScene scene, RTCRay16 *rays) {
#if RAD_EMBREE_MAJOR >= 4
  RTCRayQueryContext context;
  rtcInitRayQueryContext(&context);
  RTCOccludedArguments args;
  rtcInitOccludedArguments(&args);
  args.context = &context;
  args.flags = RTC_RAY_QUERY_FLAG_COHERENT;
  rtcOccluded16(valid, scene, rays, &args);
#else
  RTCIntersectContext context;
  rtcInitIntersectContext(&context);
  context.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
  rtcOccluded16(valid, scene, &context, rays);
#endif
}

}  // namespace rad
