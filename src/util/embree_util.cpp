#include "util/embree_util.h"

#include <string>

#include "util/error.h"

namespace rad {

namespace {

void EmbreeErrorCallback(void *, RTCError code, const char *message) {
  RAD_FATAL("Embree error " + std::to_string(int(code)) + ": " + (message ? message : ""));
}

// Holds the device for the life of the process. Scenes still alive at exit keep Embree's own reference to it.
class ProcessDevice {
 public:
  ProcessDevice() : device_(rtcNewDevice(nullptr)) {
    if (!device_) RAD_FATAL("rtcNewDevice failed (error " + std::to_string(int(rtcGetDeviceError(nullptr))) + ")");
    rtcSetDeviceErrorFunction(device_, EmbreeErrorCallback, nullptr);
  }
  ~ProcessDevice() { rtcReleaseDevice(device_); }
  ProcessDevice(const ProcessDevice &) = delete;
  ProcessDevice &operator=(const ProcessDevice &) = delete;
  RTCDevice Get() const { return device_; }

 private:
  RTCDevice device_;
};

}  // namespace

RTCDevice EmbreeDevice() {
  static const ProcessDevice device;  // thread-safe initialisation
  return device.Get();
}

RTCRay MakeRay(Vec3 origin, Vec3 direction, float tnear, float tfar) {
  RTCRay ray;
  ray.org_x = float(origin.x);
  ray.org_y = float(origin.y);
  ray.org_z = float(origin.z);
  ray.dir_x = float(direction.x);
  ray.dir_y = float(direction.y);
  ray.dir_z = float(direction.z);
  ray.tnear = tnear;
  ray.tfar = tfar;
  ray.time = 0;
  ray.mask = 0xFFFFFFFFu;
  ray.id = 0;
  ray.flags = 0;
  return ray;
}

RTCRayHit MakeRayHit(Vec3 origin, Vec3 direction, float tnear, float tfar) {
  RTCRayHit rh;
  rh.ray = MakeRay(origin, direction, tnear, tfar);
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  return rh;
}

}  // namespace rad
