#include "formfactor/geometry.h"

#include <tbb/parallel_for.h>

#include "formfactor/shaft.h"
#include "formfactor/unoccluded.h"

namespace rad {


namespace {

void AddOccluders(const Scene &scene, FormFactorGeometry &g) {
  g.occludersOfFace.resize(scene.faces.size());
  for (size_t f = 0; f < scene.faces.size(); ++f) {
    const auto &c = scene.faces[f].corners;
    const int n = int(c.size());
    const Vec3 normal = Normalize(NewellNormal(c.data(), n));
    if (n <= ConvexPolygon::kCapacity - 2) {  // leave room for clipping
      g.occludersOfFace[f].push_back(int(g.occluders.size()));
      g.occluders.push_back(Occluder{MakeConvexPolygon(c.data(), n), normal, int(f)});
    } else {
      for (int k = 1; k + 1 < n; ++k) {
        const Vec3 tri[3] = {c[0], c[k], c[k + 1]};
        g.occludersOfFace[f].push_back(int(g.occluders.size()));
        g.occluders.push_back(Occluder{MakeConvexPolygon(tri, 3), normal, int(f)});
      }
    }
  }
}

// For each ordered pair of faces (I, J) that can exchange light, the occluders that may reach into the hull
// of the two faces. A patch pair's shaft lies inside its faces' shaft, so only these need testing later.
void BuildFacePairCandidates(FormFactorGeometry &g) {
  const int nf = g.faceCount;
  std::vector<std::vector<int32_t>> lists(size_t(nf) * nf);
  tbb::parallel_for(0, nf, [&](int I) {
    for (int J = 0; J < nf; ++J) {
      if (I == J) continue;
      for (int a : g.occludersOfFace[I]) {
        for (int b : g.occludersOfFace[J]) {
          const Occluder &oa = g.occluders[a], &ob = g.occluders[b];
          const ClippedPair cp = ClipPair(oa.polygon, oa.normal, ob.polygon, ob.normal);
          if (cp.emitter.n == 0) continue;
          const Shaft shaft = MakeShaft(cp.emitter, oa.normal, cp.receiver, ob.normal);
          auto &list = lists[size_t(I) * nf + J];
          for (size_t o = 0; o < g.occluders.size(); ++o) {
            const Occluder &oc = g.occluders[o];
            if (oc.face == I || oc.face == J) continue;
            if (!ShaftMayBeBlockedBy(shaft, oc.polygon.v, oc.polygon.n, oc.normal)) continue;
            bool seen = false;
            for (int32_t x : list) seen = seen || x == int32_t(o);
            if (!seen) list.push_back(int32_t(o));
          }
        }
      }
    }
  });
  g.candidateStart.assign(size_t(nf) * nf + 1, 0);
  for (size_t k = 0; k < lists.size(); ++k) g.candidateStart[k + 1] = g.candidateStart[k] + int64_t(lists[k].size());
  g.candidates.reserve(size_t(g.candidateStart.back()));
  for (const auto &l : lists) g.candidates.insert(g.candidates.end(), l.begin(), l.end());
  g.hasFacePairCandidates = true;
}

}  // namespace

FormFactorGeometry BuildFormFactorGeometry(const Scene &scene, int subdiv) {
  FormFactorGeometry g;
  g.patches = MakePatches(scene, subdiv);
  g.faceCount = int(scene.faces.size());
  AddOccluders(scene, g);
  if (g.faceCount <= kMaxFacesForFacePairCulling) BuildFacePairCandidates(g);
  return g;
}

}  // namespace rad
