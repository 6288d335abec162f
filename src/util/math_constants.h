// Mathematical constants, one home for each (host and device code alike).
#pragma once

namespace rad {

constexpr double kPi = 3.14159265358979323846;

}  // namespace rad
