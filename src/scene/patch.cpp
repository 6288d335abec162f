#include "scene/patch.h"

#include "util/error.h"

namespace rad {

Vec3 NewellNormal(const Vec3 *corners, int count) {
  Vec3 n;
  for (int k = 0; k < count; ++k) {
    const Vec3 &a = corners[k];
    const Vec3 &b = corners[(k + 1) % count];
    n.x += (a.y - b.y) * (a.z + b.z);
    n.y += (a.z - b.z) * (a.x + b.x);
    n.z += (a.x - b.x) * (a.y + b.y);
  }
  return n;
}

namespace {

Patch MakePatch(const Vec3 *corners, int count, int face, const Material &material, Vec3 faceNormal) {
  Patch p;
  p.cornerCount = count;
  for (int k = 0; k < 4; ++k) p.corners[k] = corners[k < count ? k : count - 1];
  const Vec3 areaVector = NewellNormal(corners, count);
  p.area = 0.5 * Length(areaVector);
  // The face's normal, not the patch's own: all patches of a planar face share it exactly.
  p.normal = faceNormal;
  // Area centroid (for a quad: area-weighted centroids of its two triangles).
  if (count == 3) {
    p.centroid = (corners[0] + corners[1] + corners[2]) / 3.0;
  } else {
    const double a1 = 0.5 * Length(Cross(corners[1] - corners[0], corners[2] - corners[0]));
    const double a2 = 0.5 * Length(Cross(corners[2] - corners[0], corners[3] - corners[0]));
    const Vec3 c1 = (corners[0] + corners[1] + corners[2]) / 3.0;
    const Vec3 c2 = (corners[0] + corners[2] + corners[3]) / 3.0;
    p.centroid = (a1 + a2 > 0) ? (c1 * a1 + c2 * a2) / (a1 + a2) : c1;
  }
  p.face = face;
  p.reflectance = material.reflectance;
  p.emission = material.emission;
  return p;
}

Vec3 Bilinear(const Vec3 *q, double u, double v) {
  return q[0] * ((1 - u) * (1 - v)) + q[1] * (u * (1 - v)) + q[2] * (u * v) + q[3] * ((1 - u) * v);
}

// Uniform split of a quad into n x n quads in its bilinear parameters. For a planar quad this is exactly
// the recursive midpoint split (the mean of a sub-quad's corners is the image of its parameter centre).
void SplitQuad(const Vec3 *q, int n, int face, const Material &m, Vec3 normal, std::vector<Patch> &out) {
  for (int b = 0; b < n; ++b) {
    for (int a = 0; a < n; ++a) {
      const double u0 = double(a) / n, u1 = double(a + 1) / n;
      const double v0 = double(b) / n, v1 = double(b + 1) / n;
      const Vec3 c[4] = {Bilinear(q, u0, v0), Bilinear(q, u1, v0), Bilinear(q, u1, v1), Bilinear(q, u0, v1)};
      out.push_back(MakePatch(c, 4, face, m, normal));
    }
  }
}

// Uniform split of a triangle into n^2 triangles on its barycentric grid (= recursive midpoint split).
// Orientation is kept: "up" triangles are images of the parent, "down" ones are point reflections of it.
void SplitTriangle(const Vec3 *t, int n, int face, const Material &m, Vec3 normal, std::vector<Patch> &out) {
  auto P = [&](int i, int j) {  // grid point i steps along t0->t1, j steps along t0->t2
    return t[0] + (t[1] - t[0]) * (double(i) / n) + (t[2] - t[0]) * (double(j) / n);
  };
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i + j < n; ++i) {
      const Vec3 up[3] = {P(i, j), P(i + 1, j), P(i, j + 1)};
      out.push_back(MakePatch(up, 3, face, m, normal));
      if (i + j + 1 < n) {
        const Vec3 down[3] = {P(i + 1, j), P(i + 1, j + 1), P(i, j + 1)};
        out.push_back(MakePatch(down, 3, face, m, normal));
      }
    }
  }
}

}  // namespace

long long CountPatches(const Scene &scene, int subdiv) {
  const long long perPiece = 1LL << (2 * subdiv);
  long long total = 0;
  for (const Face &f : scene.faces) {
    const int n = int(f.corners.size());
    total += (n <= 4 ? 1 : n - 2) * perPiece;
  }
  return total;
}

std::vector<Patch> MakePatches(const Scene &scene, int subdiv) {
  if (subdiv < 0 || subdiv > 12) throw InputError("--subdiv must be between 0 and 12");
  const int n = 1 << subdiv;
  std::vector<Patch> patches;
  patches.reserve(size_t(CountPatches(scene, subdiv)));
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const Face &face = scene.faces[f];
    const Material &m = scene.materials[face.material];
    const int count = int(face.corners.size());
    const Vec3 normal = Normalize(NewellNormal(face.corners.data(), count));
    if (count == 4) {
      SplitQuad(face.corners.data(), n, int(f), m, normal, patches);
    } else {
      for (int k = 1; k + 1 < count; ++k) {
        const Vec3 tri[3] = {face.corners[0], face.corners[k], face.corners[k + 1]};
        SplitTriangle(tri, n, int(f), m, normal, patches);
      }
    }
  }
  return patches;
}

}  // namespace rad
