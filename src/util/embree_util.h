// What every Embree user in the project does the same way: one device per process, whose errors are fatal
// (registered right after rtcNewDevice, as Embree's tutorials do), and ray records with every field set.
#pragma once

#include <embree3/rtcore.h>

#include "util/vec3.h"

namespace rad {

// The process's Embree device, with the project's error callback (RAD_FATAL): made on first use (by any
// thread), released at exit. Every scene, geometry and BVH of the program is made on it; callers do not release it.
RTCDevice EmbreeDevice();

// A ray from `origin` along `direction` over [tnear, tfar], mask all ones, no time or flags.
RTCRay MakeRay(Vec3 origin, Vec3 direction, float tnear, float tfar);

// The same ray with an empty hit record, for rtcIntersect1.
RTCRayHit MakeRayHit(Vec3 origin, Vec3 direction, float tnear, float tfar);

}  // namespace rad
