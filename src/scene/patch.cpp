#include "scene/patch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lightmap/atlas.h"
#include "scene/texel_charts.h"
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

double PolygonDiameter(const std::vector<Vec3> &corners) {
  double diameter = 0;
  for (size_t i = 0; i < corners.size(); ++i)
    for (size_t j = i + 1; j < corners.size(); ++j) diameter = std::max(diameter, Length(corners[j] - corners[i]));
  return diameter;
}

Patch PatchOf(const Vec3 *corners, int count, int face, const Material &material, Vec3 faceNormal) {
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

namespace {

Vec3 Bilinear(const Vec3 *q, double u, double v) {
  return q[0] * ((1 - u) * (1 - v)) + q[1] * (u * (1 - v)) + q[2] * (u * v) + q[3] * ((1 - u) * v);
}

// Split of a quad into nu x nv quads in its bilinear parameters (u along corners 0 -> 1, v along 0 -> 3). For a
// planar quad and nu = nv = 2^K this is exactly the recursive midpoint split (the mean of a sub-quad's corners
// is the image of its parameter centre).
void SplitQuad(const Vec3 *q, int nu, int nv, int face, const Material &m, Vec3 normal, std::vector<Patch> &out) {
  for (int b = 0; b < nv; ++b) {
    for (int a = 0; a < nu; ++a) {
      const double u0 = double(a) / nu, u1 = double(a + 1) / nu;
      const double v0 = double(b) / nv, v1 = double(b + 1) / nv;
      const Vec3 c[4] = {Bilinear(q, u0, v0), Bilinear(q, u1, v0), Bilinear(q, u1, v1), Bilinear(q, u0, v1)};
      out.push_back(PatchOf(c, 4, face, m, normal));
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
      out.push_back(PatchOf(up, 3, face, m, normal));
      if (i + j + 1 < n) {
        const Vec3 down[3] = {P(i + 1, j), P(i + 1, j + 1), P(i, j + 1)};
        out.push_back(PatchOf(down, 3, face, m, normal));
      }
    }
  }
}

// Pieces a polygon is split into before subdivision: a quad stays whole, an n-gon is fanned into triangles.
int PieceCount(const Face &f) {
  const int n = int(f.corners.size());
  return n <= 4 ? 1 : n - 2;
}

// Splits a size-limited edge run needs: the longer of two opposite edges over the limit, rounded up. Sub-quads
// of a planar convex quad then have edges no longer than the limit (each is a convex combination of the two
// opposite edges, scaled by 1/n).
int SplitsFor(double length, double maxSize) {
  const double n = std::ceil(length / maxSize);
  return n < 1 ? 1 : (n > 1e6 ? 1000000 : int(n));
}

struct QuadSplits {
  int nu, nv;
};

QuadSplits SplitsOfQuad(const Vec3 *q, const Meshing &m) {
  if (m.maxPatchSize <= 0) return {1 << m.subdiv, 1 << m.subdiv};
  return {SplitsFor(std::max(Length(q[1] - q[0]), Length(q[2] - q[3])), m.maxPatchSize),
          SplitsFor(std::max(Length(q[3] - q[0]), Length(q[2] - q[1])), m.maxPatchSize)};
}

int SplitsOfTriangle(const Vec3 *t, const Meshing &m) {
  if (m.maxPatchSize <= 0) return 1 << m.subdiv;
  return SplitsFor(std::max({Length(t[1] - t[0]), Length(t[2] - t[1]), Length(t[0] - t[2])}), m.maxPatchSize);
}

// Calls quad(corners, nu, nv) or triangle(corners, n) for every piece of every face, in face order.
// Faces of an obstruction make no patches: they only occlude.
template <typename QuadFn, typename TriangleFn>
void ForEachPiece(const Scene &scene, const Meshing &m, QuadFn quad, TriangleFn triangle) {
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const Face &face = scene.faces[f];
    if (scene.materials[size_t(face.material)].obstruction) continue;
    const int count = int(face.corners.size());
    if (count == 4) {
      const QuadSplits s = SplitsOfQuad(face.corners.data(), m);
      quad(f, face.corners.data(), s.nu, s.nv);
    } else {
      for (int k = 1; k + 1 < count; ++k) {
        const Vec3 tri[3] = {face.corners[0], face.corners[size_t(k)], face.corners[size_t(k) + 1]};
        triangle(f, tri, SplitsOfTriangle(tri, m));
      }
    }
  }
}

void CheckMeshing(const Meshing &m) {
  if (m.subdiv < 0 || m.subdiv > 12) throw InputError("--subdiv must be between 0 and 12");
  if (!(m.maxPatchSize >= 0) || !std::isfinite(m.maxPatchSize))
    throw InputError("--max-patch-size must be a positive length");
  if (!(m.texelSize >= 0) || !std::isfinite(m.texelSize)) throw InputError("--texel-size must be a positive length");
  if (m.lightmapResolution < 0) throw InputError("--lightmap-resolution must be a positive number of texels");
}

double LongestSceneEdge(const Scene &scene) {
  double longest = 0;
  for (const Face &f : scene.faces)
    for (size_t k = 0; k < f.corners.size(); ++k)
      longest = std::max(longest, Length(f.corners[(k + 1) % f.corners.size()] - f.corners[k]));
  return longest;
}

}  // namespace

std::string Meshing::Describe() const {
  char text[96];
  if (texelSize > 0)
    std::snprintf(text, sizeof text, "texel size %.6g", texelSize);
  else if (maxPatchSize <= 0)
    std::snprintf(text, sizeof text, "subdiv %d", subdiv);
  else
    std::snprintf(text, sizeof text, "max patch size %.6g", maxPatchSize);
  if (!refined) return text;
  const char *times[] = {"", "once", "twice"};
  return std::string(text) + ", refined " +
         (refinePasses <= 2 ? std::string(times[refinePasses]) : std::to_string(refinePasses) + " times") +
         " where B varies";
}

void SplitPatch(const Patch &parent, std::vector<Patch> &out) {
  Material material;
  material.reflectance = parent.reflectance;
  material.emission = parent.emission;
  const size_t first = out.size();
  if (parent.cornerCount == 4)
    SplitQuad(parent.corners, 2, 2, parent.face, material, parent.normal, out);
  else
    SplitTriangle(parent.corners, 2, parent.face, material, parent.normal, out);
  for (size_t k = first; k < out.size(); ++k) out[k].polygon = parent.polygon;
}

double LongestEdge(const Patch &p) {
  double longest = 0;
  for (int k = 0; k < p.cornerCount; ++k)
    longest = std::max(longest, Length(p.corners[(k + 1) % p.cornerCount] - p.corners[k]));
  return longest;
}

long long CountPatches(const Scene &scene, const Meshing &meshing) {
  CheckMeshing(meshing);
  if (meshing.refined) return (long long)meshing.refined->size();
  if (meshing.texelSize > 0) return CountTexelPatches(scene, MakeTexelCharts(scene, meshing.texelSize));
  long long total = 0;
  ForEachPiece(scene, meshing, [&](size_t, const Vec3 *, int nu, int nv) { total += (long long)nu * nv; },
               [&](size_t, const Vec3 *, int n) { total += (long long)n * n; });
  return total;
}

Meshing ResolveMeshing(const Scene &scene, const Meshing &meshing) {
  Meshing m = meshing;
  bool anyPatch = false;
  for (const Face &f : scene.faces) anyPatch = anyPatch || !scene.materials[size_t(f.material)].obstruction;
  if (!anyPatch) throw InputError(scene.path + ": no patches: every polygon is an obstruction");
  if (m.patches < 0) throw InputError("--patches must be positive");
  if (m.maxPatchSize > 0 || m.texelSize > 0) m.subdiv = 0;  // by size: `run`'s default level does not apply
  if (m.texelSize > 0 || m.lightmapResolution > 0) {
    if (m.lightmapResolution <= 0) m.lightmapResolution = kDefaultLightmapPage;
    if (m.texelSize <= 0) m.texelSize = TexelSizeForOnePage(scene, m.lightmapResolution);
    m.subdiv = 0;
    // A polygon that cannot have a chart, or a chart larger than a page, is refused here, before any work.
    PackCharts(scene, MakeTexelCharts(scene, m.texelSize), m.lightmapResolution);
    return m;
  }
  if (m.patches == 0 || m.refined) return m;
  long long pieces = 0;
  for (const Face &f : scene.faces) pieces += scene.materials[size_t(f.material)].obstruction ? 0 : PieceCount(f);
  if (m.patches < pieces)
    throw InputError("--patches " + std::to_string(m.patches) + " is fewer than the scene's " +
                     std::to_string(pieces) + " polygons (after fan-splitting n-gons): every polygon is a patch at least");
  // The total only grows as the size shrinks: bisect (in log size) for the largest size whose total fits.
  double hi = LongestSceneEdge(scene) * 1.0000001;  // every polygon one patch
  double lo = hi;
  m.subdiv = 0;
  auto count = [&](double size) {
    Meshing probe = m;
    probe.maxPatchSize = size;
    return CountPatches(scene, probe);
  };
  while (count(lo) <= m.patches && lo > hi * 1e-9) lo *= 0.5;
  for (int iteration = 0; iteration < 64 && hi / lo > 1 + 1e-12; ++iteration) {
    const double mid = std::sqrt(lo * hi);
    (count(mid) <= m.patches ? hi : lo) = mid;
  }
  m.maxPatchSize = hi;
  return m;
}

std::vector<Patch> MakePatches(const Scene &scene, const Meshing &meshing) {
  if (meshing.refined) return *meshing.refined;
  std::vector<Patch> patches;
  if (meshing.texelSize > 0) {
    MakeTexelPatches(scene, MakeTexelCharts(scene, meshing.texelSize), &patches, nullptr);
    return patches;
  }
  patches.reserve(size_t(CountPatches(scene, meshing)));
  ForEachPiece(
      scene, meshing,
      [&](size_t f, const Vec3 *q, int nu, int nv) {
        const Face &face = scene.faces[f];
        const Vec3 normal = Normalize(NewellNormal(face.corners.data(), int(face.corners.size())));
        SplitQuad(q, nu, nv, int(f), scene.materials[size_t(face.material)], normal, patches);
      },
      [&](size_t f, const Vec3 *t, int n) {
        const Face &face = scene.faces[f];
        const Vec3 normal = Normalize(NewellNormal(face.corners.data(), int(face.corners.size())));
        SplitTriangle(t, n, int(f), scene.materials[size_t(face.material)], normal, patches);
      });
  for (Patch &p : patches) p.polygon = scene.faces[size_t(p.face)].polygon;
  return patches;
}

}  // namespace rad
