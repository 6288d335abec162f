// Embree's API, of the major version chosen when the project was configured (RAD_EMBREE_MAJOR, 3 or 4: CMake's
// RAD_EMBREE option). Every file includes this instead of <embree3/rtcore.h> or <embree4/rtcore.h>; what differs
// between the two in the calls the project makes is in util/embree_util.h.
#pragma once

#if defined(RAD_EMBREE_MAJOR) && RAD_EMBREE_MAJOR >= 4
#include <embree4/rtcore.h>
#else
#include <embree3/rtcore.h>
#endif
