// Small 3-vector in double precision, usable on host and device.
#pragma once

#include <cmath>

#include "util/hd.h"

namespace rad {

struct Vec3 {
  double x = 0, y = 0, z = 0;
  RAD_HD constexpr Vec3() = default;
  RAD_HD constexpr Vec3(double xx, double yy, double zz) : x(xx), y(yy), z(zz) {}
  RAD_HD double operator[](int k) const { return k == 0 ? x : (k == 1 ? y : z); }
  RAD_HD double &operator[](int k) { return k == 0 ? x : (k == 1 ? y : z); }
};

RAD_HD RAD_INLINE Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
RAD_HD RAD_INLINE Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
RAD_HD RAD_INLINE Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
RAD_HD RAD_INLINE Vec3 operator*(Vec3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
RAD_HD RAD_INLINE Vec3 operator*(double s, Vec3 a) { return a * s; }
RAD_HD RAD_INLINE Vec3 operator/(Vec3 a, double s) { return {a.x / s, a.y / s, a.z / s}; }
RAD_HD RAD_INLINE Vec3 &operator+=(Vec3 &a, Vec3 b) { a = a + b; return a; }
RAD_HD RAD_INLINE Vec3 &operator-=(Vec3 &a, Vec3 b) { a = a - b; return a; }
RAD_HD RAD_INLINE Vec3 &operator*=(Vec3 &a, double s) { a = a * s; return a; }

RAD_HD RAD_INLINE double Dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
RAD_HD RAD_INLINE Vec3 Cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
RAD_HD RAD_INLINE double LengthSquared(Vec3 a) { return Dot(a, a); }
RAD_HD RAD_INLINE double Length(Vec3 a) { return sqrt(Dot(a, a)); }
RAD_HD RAD_INLINE Vec3 Normalize(Vec3 a) { return a / Length(a); }
// Comparisons, not fmin/fmax: g++ without -ffast-math calls libm for those (their NaN rules), and these run
// in the innermost loops (shafts, boxes); inputs are finite (the loaders reject the rest).
RAD_HD RAD_INLINE double Smaller(double a, double b) { return b < a ? b : a; }
RAD_HD RAD_INLINE double Larger(double a, double b) { return b > a ? b : a; }
RAD_HD RAD_INLINE Vec3 Min(Vec3 a, Vec3 b) { return {Smaller(a.x, b.x), Smaller(a.y, b.y), Smaller(a.z, b.z)}; }
RAD_HD RAD_INLINE Vec3 Max(Vec3 a, Vec3 b) { return {Larger(a.x, b.x), Larger(a.y, b.y), Larger(a.z, b.z)}; }

}  // namespace rad
