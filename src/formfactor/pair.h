// One form factor F_ij: the unoccluded part, the occluders that may stand between the two patches, and with
// them either the exact visible-region integral (the default) or the flag that shadow rays must estimate the
// visible fraction. Compiled for the host and, under nvcc, for the GPU (RAD_HD): both backends run this code.
//
// Each unordered pair is integrated in one direction only, over its canonical emitter (the smaller patch; the
// lower number on a tie; an occluded pair over the patch farther from its occluders, IntegrateOverReceiver),
// and the other entry follows by reciprocity, F_ji = A_i F_ij / A_j. So reciprocity holds to rounding whatever
// the tolerance, and the cheaper side carries the outer integral.
#pragma once

#include <cstdint>
#include <vector>

#include "formfactor/convex_body_shadow.h"
#include "formfactor/full_occlusion.h"
#include "formfactor/geometry.h"
#include "formfactor/geometry_view.h"
#include "formfactor/pair_result.h"
#include "formfactor/penumbra.h"
#include "formfactor/shaft.h"
#include "formfactor/shaft_query.h"
#include "formfactor/unoccluded.h"
#include "formfactor/visible_region.h"
#include "util/hd.h"

namespace rad {

// The integrand of occluded pairs: the factor from a point of the emitter to what it sees of the receiver, or
// (`blocked`) to what the occluders hide of it.
struct VisibleReceiverFactor {
  const ReceiverFrame *frame;
  const ConvexPolygon *receiver;  // in 3-D, for points that no shadow reaches
  Vec3 emitterNormal;
  const Occluder *occluders;
  const int32_t *candidates;
  int candidateCount;
  bool blocked = false;
  const FixedSilhouette *silhouettes = nullptr;  // of convex bodies, fixed over the piece integrated
  int silhouetteCount = 0;

  // The shadow of convex body `body` from x: through its silhouette where that is fixed over the piece, else
  // the hull of its faces' shadows. False when it must be cast face by face (ConvexBodyShadow).
  RAD_HD bool BodyShadow(Vec3 x, double h, int body, Polygon2 &shadow) const {
    for (int s = 0; s < silhouetteCount; ++s)
      if (silhouettes[s].body == body) {
        shadow.n = 0;
        if (silhouettes[s].n > 0) CastFixedSilhouette(*frame, x, h, silhouettes[s], shadow);
        return true;
      }
    return ConvexBodyShadow(*frame, x, h, occluders, candidates, candidateCount, body, shadow);
  }

  RAD_HD RAD_DEVICE_NOINLINE double operator()(Vec3 x) const {  // called from several cubature rules
    Polygon2 shadows[kMaxPairOccluders];
    int count = 0;
    const double h = Dot(frame->normal, x - frame->origin);
    int bodies[kMaxPairOccluders];  // convex bodies already cast as one shadow, and those cast face by face
    bool bodyWhole[kMaxPairOccluders];
    int bodyCount = 0;
    if (h > 0)
      for (int c = 0; c < candidateCount; ++c) {
        const Occluder &o = occluders[candidates[c]];
        if (o.convexSurface >= 0) {
          int known = 0;
          while (known < bodyCount && bodies[known] != o.convexSurface) ++known;
          if (known == bodyCount) {
            bodies[bodyCount] = o.convexSurface;
            bodyWhole[bodyCount++] = BodyShadow(x, h, o.convexSurface, shadows[count]);
            if (bodyWhole[known] && shadows[count].n > 0) ++count;
          }
          if (bodyWhole[known]) continue;
        }
        if (o.closedSurface && !(Dot(o.normal, x - o.polygon.v[0]) > 0)) continue;  // geometry.h says why
        ShadowOnReceiver(*frame, x, h, o.polygon, shadows[count]);
        if (shadows[count].n > 0) ++count;
      }
    if (count == 0) return blocked ? 0 : PointToPolygonFormFactor(x, emitterNormal, *receiver);
    const FramePoint p = InFrame(*frame, x, emitterNormal);
    double hidden;
    if (DisjointShadowsFactor(p, *frame, shadows, count, hidden))
      return blocked ? hidden : PlanePolygonFactor(p, frame->polygon) - hidden;
    const double visible = PointToVisibleReceiver(p, *frame, shadows, count);
    return blocked ? PlanePolygonFactor(p, frame->polygon) - visible : visible;
  }
};

// The occluders that may block some segment between the two clipped patches, in a fixed order; returns how
// many there are (counting stops at capacity + 1). `first`/`second` are the pair in canonical order, so that
// both entries of a pair see the same list.
RAD_HD inline int PairOccluders(const GeometryView &g, const Patch &first, const Patch &second,
                                const ClippedPair &canonical, int32_t *out, int capacity) {
  if (!g.hasFacePairCandidates) {
    if (g.occluderBvh.nodeCount == 0) return 0;  // nothing occludes (no polygon, or only an enclosing room's)
    const Shaft shaft = MakeShaft(canonical.emitter, first.normal, canonical.receiver, second.normal);
    return ShaftOccludersBvh(g.occluderBvh, g.occluderBvhBoxes, g.occluders, shaft, first.face, second.face, out,
                             capacity);
  }
  const int lo = first.face < second.face ? first.face : second.face;
  const int hi = first.face < second.face ? second.face : first.face;
  const int64_t key = int64_t(lo) * g.faceCount + hi;
  const int64_t begin = g.candidateStart[key], end = g.candidateStart[key + 1];
  if (begin == end) return 0;
  const Shaft shaft = MakeShaft(canonical.emitter, first.normal, canonical.receiver, second.normal);
  int count = 0;
  for (int64_t c = begin; c < end && count <= capacity; ++c) {
    const Occluder &o = g.occluders[g.candidates[c]];
    if (!ShaftMayBeBlockedBy(shaft, o.polygon.v, o.polygon.n, o.normal)) continue;
    if (count < capacity) out[count] = g.candidates[c];
    ++count;
  }
  return count;
}

// Whether x crossing the plane of occluder o changes nothing on the receiver. From x in that plane the occluder
// is seen edge-on and its shadow lies on the line where its plane meets the receiver's; from x just off it, in
// a sliver along that line whose width shrinks with the distance, as long as the occluder stays below x's
// level (toward the receiver; a part near x's level casts its shadow far away, and a part level with x goes
// from casting none to hiding everything as x crosses). So when that line misses the receiver and the occluder
// lies below the level of every point of the emitter, crossing its plane changes nothing there, and no cut is
// needed: true then.
RAD_HD inline bool PlaneCrossingChangesNothing(const ClippedPair &cp, Vec3 receiverNormal, const Occluder &o,
                                               double tolerance) {
  const int sides = PlaneSides(cp.receiver, o.normal, o.polygon.v[0], tolerance);
  if (sides != kAhead && sides != kBehind) return false;
  const Vec3 r0 = cp.receiver.v[0];
  double lowest = 1e300, highest = -1e300;  // the emitter's lowest point, the occluder's highest
  for (int k = 0; k < cp.emitter.n; ++k) lowest = Smaller(lowest, Dot(receiverNormal, cp.emitter.v[k] - r0));
  for (int k = 0; k < o.polygon.n; ++k) highest = Larger(highest, Dot(receiverNormal, o.polygon.v[k] - r0));
  return highest < lowest - tolerance;
}

// Pieces the emitter of an occluded pair is cut into (see OccludedFormFactor).
constexpr int kMaxEmitterPieces = 32;

// The exact occluded factor. Where x crosses the plane of an occluder whose shadow falls on the receiver, the
// silhouette switches from one edge of that occluder to another, and the integrand has a kink along the line
// where that plane meets the emitter (the factor's first derivative jumps). A cubature straddling such a line
// converges like h^3 per triangle, slowly; so the emitter is first cut along the occluders' planes, and each
// convex piece, on which the integrand is smooth but for milder events, is integrated on its own. The same kink
// appears where x enters the plane through an edge of the receiver and a parallel occluder edge (the shadow's
// edge then sweeps across the receiver's edge all at once): axis-aligned rooms are full of those, so their
// planes cut the emitter too.
//
// The emitter is first cut where the occluders' shadows begin and end (penumbra.h): points inside an umbra see
// none of the receiver and contribute exactly 0, and the pieces around it are cut along its edges. When the
// occluders hide something only from a part of the emitter, the cubature runs over that part alone and
// integrates what they hide there, which is taken from the unoccluded factor.
//
// `workLimit` (PairSettings::occludedWorkLimit; 0: none): the pieces' evaluations, each weighted by one plus the
// occluders it clips the receiver against (its cost grows with them), after which the pair gives up
// (`abandoned`, no value). Stopping never changes a pair that finishes: the same steps run in the same order.
RAD_HD RAD_DEVICE_NOINLINE inline UnoccludedResult OccludedFormFactor(const ClippedPair &cp, const Patch &emitter,
                                                                      const Patch &receiver, const GeometryView &g,
                                                                      const int32_t *candidates, int count,
                                                                      const QuadratureSettings &q,
                                                                      double workLimit = 0) {
  // The tolerance is relative to the pair's unoccluded factor: a pair that is 99.9 % blocked owes the rows it
  // belongs to an error relative to the light it could carry, not to the little that gets through (refining
  // that to 1e-5 of itself took most of the exact kernel's time on the reference scene, and it still stopped
  // at the cell limit).
  const UnoccludedResult open = UnoccludedFormFactor(cp, emitter.normal, emitter.area, q);
  const ShadowRegions regions = FindShadowRegions(cp, emitter.normal, receiver.normal, g.occluders, candidates, count);
  if (regions.penumbra.n == 0) return open;
  const bool blockedForm = !regions.wholeEmitter;  // integrate what is hidden, not what is seen
  const ConvexPolygon &domain = regions.penumbra;
  const double tolerance = 1e-9 * PolygonDiameter(cp.emitter);

  ConvexPolygon pieces[kMaxEmitterPieces];
  int pieceCount = 0;
  ConvexPolygon umbra;  // the part of the domain inside the umbra (n == 0: none)
  if (regions.umbra.n >= 3) {
    // The domain less the umbra as convex pieces: outside the umbra's k-th edge and inside the ones before it.
    const ConvexPolygon &u = regions.umbra;
    const Vec3 centre = PolygonCentre(u);
    ConvexPolygon rest = domain;
    bool fits = true;
    for (int k = 0; k < u.n && rest.n > 0; ++k) {
      const Vec3 outward = OutwardEdgeNormal(u, k, emitter.normal, centre);
      if (!(LengthSquared(outward) > 0)) continue;
      if (rest.n + 1 > ConvexPolygon::kCapacity) {
        fits = false;
        break;
      }
      const ConvexPolygon outside = ClipToHalfSpace(rest, outward, u.v[k], tolerance);
      rest = ClipToHalfSpace(rest, -outward, u.v[k], tolerance);
      if (outside.n > 0) pieces[pieceCount++] = outside;
    }
    if (fits) {
      umbra = rest;
    } else {
      pieceCount = 0;
    }
  }
  if (umbra.n == 0) {
    pieceCount = 1;
    pieces[0] = domain;
  } else if (pieceCount == 0 && !blockedForm) {
    UnoccludedResult none;  // the whole emitter is in the umbra
    none.evaluations = open.evaluations;
    none.nodePairs = open.nodePairs;
    return none;
  }
  // Cuts the pieces along a plane; with a segment a-b, only the pieces the segment passes through.
  auto cut = [&](Vec3 normal, Vec3 point, const Vec3 *a = nullptr, const Vec3 *b = nullptr) {
    const int before = pieceCount;
    for (int p = 0; p < before && pieceCount < kMaxEmitterPieces; ++p) {
      if (pieces[p].n + 1 > ConvexPolygon::kCapacity) continue;  // a cut adds a corner to each side
      // The plane misses pieces it leaves on one side (most of them).
      if (PlaneSides(pieces[p], normal, point, tolerance) != kAcross) continue;
      if (a && !SegmentPassesThrough(pieces[p], emitter.normal, *a, *b, tolerance)) continue;
      const ConvexPolygon front = ClipToHalfSpace(pieces[p], normal, point, tolerance);
      const ConvexPolygon back = ClipToHalfSpace(pieces[p], -normal, point, tolerance);
      if (front.n == 0 || back.n == 0) continue;  // the plane misses this piece
      pieces[p] = front;
      pieces[pieceCount++] = back;
    }
  };
  for (int c = 0; c < count; ++c) {
    const Occluder &o = g.occluders[candidates[c]];
    if (!PlaneCrossingChangesNothing(cp, receiver.normal, o, tolerance)) cut(o.normal, o.polygon.v[0]);
  }
  const ConvexPolygon &rx = cp.receiver;
  for (int c = 0; c < count && pieceCount < kMaxEmitterPieces; ++c) {
    const ConvexPolygon &o = g.occluders[candidates[c]].polygon;
    for (int k = 0; k < rx.n; ++k) {
      const Vec3 r0 = rx.v[k], dr = rx.v[(k + 1) % rx.n] - r0;
      for (int m = 0; m < o.n; ++m) {
        const Vec3 o0 = o.v[m], dm = o.v[(m + 1) % o.n] - o0;
        if (LengthSquared(Cross(dr, dm)) > 1e-18 * LengthSquared(dr) * LengthSquared(dm)) continue;  // not parallel
        const Vec3 normal = Cross(dr, o0 - r0);
        const double length = Length(normal);
        if (length > 1e-12 * Length(dr) * Length(o0 - r0)) cut(normal / length, r0);
      }
    }
  }
  ForEachShadowEvent(cp, emitter.normal, receiver.normal, g.occluders, candidates, count, [&](Vec3 a, Vec3 b) {
    const Vec3 along = b - a;
    if (pieceCount < kMaxEmitterPieces && LengthSquared(along) > tolerance * tolerance)
      cut(Normalize(Cross(emitter.normal, along)), a, &a, &b);
  });
  const ReceiverFrame frame = MakeReceiverFrame(cp.receiver, receiver.normal);
  QuadratureSettings pieceSettings = q;
  pieceSettings.absoluteTolerance =
      Larger(q.absoluteTolerance, q.relativeTolerance * open.formFactor * emitter.area / PolygonArea(domain));
  UnoccludedResult total;
  total.evaluations = open.evaluations;
  total.nodePairs = open.nodePairs;
  auto add = [&](const UnoccludedResult &r) {
    total.formFactor += r.formFactor;
    total.evaluations += r.evaluations;
    total.nodePairs += r.nodePairs;
    total.hitDepthLimit = total.hitDepthLimit || r.hitDepthLimit;
  };
  double work = open.evaluations;
  // The settings of a cubature that clips against `occluders`, within what is left of the work limit.
  auto within = [&](int occluders, bool &spent) {
    QuadratureSettings limited = pieceSettings;
    spent = false;
    if (workLimit > 0) {
      const double left = (workLimit - work) / (1 + occluders);
      spent = left < 1;
      limited.maxEvaluations = int(Smaller(left, 1e9));
    }
    return limited;
  };
  UnoccludedResult abandoned;
  abandoned.abandoned = true;
  for (int p = 0; p < pieceCount; ++p) {
    const ClippedPair piece{pieces[p], cp.receiver};
    // A piece is smaller than the emitter: of the pair's occluders, only those reaching into the piece's own
    // shaft can cast a shadow from it (the order is kept, so coincident edges are decided as before).
    int32_t pieceCandidates[kMaxPairOccluders];
    int pieceOccluders = 0;
    const Shaft shaft = MakeShaft(pieces[p], emitter.normal, cp.receiver, receiver.normal);
    for (int c = 0; c < count; ++c) {
      const Occluder &o = g.occluders[candidates[c]];
      if (ShaftMayBeBlockedBy(shaft, o.polygon.v, o.polygon.n, o.normal))
        pieceCandidates[pieceOccluders++] = candidates[c];
    }
    FixedSilhouette silhouettes[kMaxPieceSilhouettes];
    const int silhouetteCount =
        FindPieceSilhouettes(frame, pieces[p], g, pieceCandidates, pieceOccluders, tolerance, silhouettes);
    const VisibleReceiverFactor f{&frame,          &cp.receiver,   emitter.normal, g.occluders,
                                  pieceCandidates, pieceOccluders, blockedForm,    silhouettes,
                                  silhouetteCount};
    bool spent;
    const QuadratureSettings limited = within(pieceOccluders, spent);
    if (spent) return abandoned;
    const UnoccludedResult r = AdaptiveEmitterIntegral(piece, emitter.area, limited, f, kNoFarField);
    if (r.abandoned) return abandoned;
    work += double(r.evaluations) * (1 + pieceOccluders);
    add(r);
  }
  // In the umbra all is hidden: nothing to add to what is seen, the unoccluded integrand to what is hidden.
  if (blockedForm && umbra.n > 0) {
    bool spent;
    const QuadratureSettings limited = within(0, spent);
    if (spent) return abandoned;
    const UnoccludedResult r = AdaptiveEmitterIntegral(ClippedPair{umbra, cp.receiver}, emitter.area, limited,
                                                       WholeReceiverFactor{&cp.receiver, emitter.normal}, kNoFarField);
    if (r.abandoned) return abandoned;
    add(r);
  }
  if (blockedForm) {
    total.formFactor = open.formFactor - total.formFactor;
    total.hitDepthLimit = total.hitDepthLimit || open.hitDepthLimit;
  }
  return total;
}

// How far the occluders stand from a patch, in patch diameters: the nearest of their corners.
RAD_HD inline double OccluderClearance(const ConvexPolygon &patch, Vec3 normal, const GeometryView &g,
                                       const int32_t *candidates, int count) {
  double nearest = 1e300;
  for (int c = 0; c < count; ++c) {
    const ConvexPolygon &o = g.occluders[candidates[c]].polygon;
    for (int k = 0; k < o.n; ++k) nearest = Smaller(nearest, PointToPolygonDistance(o.v[k], patch, normal));
  }
  return nearest / PolygonDiameter(patch);
}

// Whether an occluded pair is integrated over its receiver rather than its canonical emitter. The inner
// integral is exact whatever the occluders do; the outer one is a cubature, which pays where the integrand
// changes fast: over points close to an occluder, whose shadow sweeps the receiver as the point moves. A floor
// patch under a sphere 0.05 above it took thousands of evaluations; integrated over the wall it exchanges
// light with, the same pair takes a few dozen. So the pair is integrated over the receiver when the occluders
// stand farther from it (in its diameters) than from the emitter, by a quarter: timed both ways pair by pair,
// the exact kernel took 4.6 % less time on the reference scene than with twice as far, and the same on the
// Cornell box (at 1.0, 1.25, 1.5, 2, 3: 1.72, 1.73, 1.75, 1.81, 1.93 s, and 2.03, 2.02, 2.02, 2.02, 2.05 s;
// choosing the faster side of every pair would take 1.56 and 1.67 s).
RAD_HD inline bool IntegrateOverReceiver(const ClippedPair &cp, const Patch &emitter, const Patch &receiver,
                                         const GeometryView &g, const int32_t *candidates, int count) {
  return OccluderClearance(cp.receiver, receiver.normal, g, candidates, count) >
         1.25 * OccluderClearance(cp.emitter, emitter.normal, g, candidates, count);
}

// True when patch a is the one integrated over for the pair (a, b).
RAD_HD RAD_INLINE bool IsCanonicalEmitter(const Patch &a, int ia, const Patch &b, int ib) {
  return a.area < b.area || (a.area == b.area && ia < ib);
}

// The occluders a walk with a larger shaft containing a pair's found (ClusterOccluders): the only ones that can
// reach into the pair's own shaft. `ids` null: none listed (the pair walks the BVH itself).
struct NearbyOccluders {
  const int32_t *ids = nullptr;
  int count = 0;
  // One of them hides every segment of the larger shaft (ClusterWalk::hidden): so it hides every pair inside
  // it, which FormFactorPair then need not prove again.
  bool hideAll = false;
};

// Whether one of occluders ids[0..count) hides every segment between the pair's clipped patches
// (full_occlusion.h): then the pair's factor is 0, with rays or exactly.
RAD_HD inline bool HiddenByOneOf(const GeometryView &g, const int32_t *ids, int count, const ClippedPair &cp) {
  for (int k = 0; k < count; ++k) {
    const Occluder &o = g.occluders[ids[k]];
    if (HidesEverySegment(o.polygon, o.normal, cp.emitter, cp.receiver)) return true;
  }
  return false;
}

// With shadow rays, whether any of `nearby` (not of the pair's faces) may reach into the pair's shaft: what
// PairOccluders says at capacity 0 (0 or more than 0), without walking the BVH. An occluder the larger shaft
// left out cannot reach the pair's; one the pair's test lets in that the BVH's boxes would have left out can
// only add shadow rays that all pass (the segments lie in the pair's hull), which multiply the entry by exactly 1.
RAD_HD inline int PairOccludersAmong(const GeometryView &g, const Patch &first, const Patch &second,
                                     const ClippedPair &canonical, const NearbyOccluders &nearby) {
  if (nearby.count == 0) return 0;
  const Shaft shaft = MakeShaft(canonical.emitter, first.normal, canonical.receiver, second.normal);
  for (int k = 0; k < nearby.count; ++k) {
    const Occluder &o = g.occluders[nearby.ids[k]];
    if (o.face == first.face || o.face == second.face) continue;
    if (ShaftMayBeBlockedBy(shaft, o.polygon.v, o.polygon.n, o.normal)) return 1;
  }
  return 0;
}

// `clearOfOccluders`: the caller has proved that no occluder reaches into the pair's shaft (a walk with a larger
// shaft containing it found none, WalkCluster), so the pair's own walk is skipped. `nearby`: the
// few a larger shaft's walk found (with shadow rays only; exact visibility keeps the BVH's order of them).
RAD_HD inline PairResult FormFactorPair(const GeometryView &g, int i, int j, const PairSettings &s,
                                        bool clearOfOccluders = false, const NearbyOccluders &nearby = {}) {
  PairResult r;
  const Patch &pi = g.patches[i], &pj = g.patches[j];
  if (i == j || pi.face == pj.face) return r;  // a planar face does not see itself
  const int32_t surface = g.convexSurfaceOfFace[pi.face];
  if (surface >= 0 && surface == g.convexSurfaceOfFace[pj.face]) return r;
  const bool forward = IsCanonicalEmitter(pi, i, pj, j);
  const Patch &e = forward ? pi : pj, &x = forward ? pj : pi;
  const WholePatch *ew = g.wholePatches ? g.wholePatches + (forward ? i : j) : nullptr;
  const WholePatch *xw = g.wholePatches ? g.wholePatches + (forward ? j : i) : nullptr;
  const ClippedPair cp = ClipPair(PatchPolygon(e), e.normal, PatchPolygon(x), x.normal, ew, xw);
  if (cp.emitter.n == 0) return r;

  int32_t candidates[kMaxPairOccluders];
  const int capacity = s.visibility == VisibilityMethod::kExact ? kMaxPairOccluders : 0;
  const bool amongNearby = !clearOfOccluders && nearby.ids != nullptr && capacity == 0;
  // A pair one listed occluder hides whole is 0 (full_occlusion.h): with rays, tried on the nearby occluders
  // before the pair's own shaft is built (most are turned down by their plane alone); with exact visibility,
  // on the pair's candidates before the integral of an empty visible region.
  if (amongNearby && (nearby.hideAll || HiddenByOneOf(g, nearby.ids, nearby.count, cp))) {
    r.hidden = true;
    return r;
  }
  const int count = clearOfOccluders ? 0
                    : amongNearby    ? PairOccludersAmong(g, e, x, cp, nearby)
                                     : PairOccluders(g, e, x, cp, candidates, capacity);
  if (count > 0 && count <= capacity && HiddenByOneOf(g, candidates, count, cp)) {
    r.hidden = true;
    return r;
  }
  UnoccludedResult u;
  if (count == 0 || count > capacity) {
    u = UnoccludedFormFactor(cp, e.normal, e.area, s.quadrature, ew, xw);
    r.needsRays = count > 0 && u.formFactor > 0;
    r.overCapacity = r.needsRays && s.visibility == VisibilityMethod::kExact;
  } else {
    // One call for either side, so that the device code holds one copy of the occluded kernel.
    const bool overReceiver = IntegrateOverReceiver(cp, e, x, g, candidates, count);  // same occluders, other way
    const ClippedPair side = overReceiver ? ClippedPair{cp.receiver, cp.emitter} : cp;
    u = OccludedFormFactor(side, overReceiver ? x : e, overReceiver ? e : x, g, candidates, count, s.quadrature,
                           s.occludedWorkLimit);
    if (u.abandoned) {
      r.deferred = true;
      return r;
    }
    if (overReceiver) u.formFactor *= x.area / e.area;  // F_ex from F_xe
    r.occluded = true;
  }
  r.evaluations = u.evaluations;
  r.nodePairs = u.nodePairs;
  r.hitDepthLimit = u.hitDepthLimit;
  r.value = forward ? u.formFactor : u.formFactor * (e.area / x.area);
  r.reverse = forward ? u.formFactor * (e.area / x.area) : u.formFactor;
  return r;
}

// Which of the two entries of an unordered pair {i, j} (i != j) computes it, when one process holds both rows:
// (i, j) if i < j and i + j is even, or i > j and i + j is odd. The checkerboard gives every row about half of
// its entries, whatever the row's number, so rows cost about the same. Exactly one of (i, j) and (j, i) is
// chosen, and since FormFactorPair gives the same bits for an entry from either side, the choice never shows
// in the results.
RAD_HD RAD_INLINE bool ComputesPair(long long i, long long j) { return (i < j) == ((i + j) % 2 == 0); }

inline PairResult FormFactorPair(const FormFactorGeometry &g, int i, int j, const PairSettings &s,
                                 bool clearOfOccluders = false) {
  return FormFactorPair(ViewOf(g), i, j, s, clearOfOccluders);
}

// The occluders (other than of patch e's own polygon) that reach into the shaft between patch e and `region`
// (a convex polygon of a cluster's plane holding the patches paired with e: the cluster's hull, or less; both
// clipped to the other's front), at most `capacity` of them in `out`; returns how many, counting stops at
// capacity + 1. 0 where e sees none of the region.
// `hidden`, when not null: whether one of those listed hides every segment between e and the region.
inline int ClusterOccluders(const GeometryView &g, const Patch &e, const ConvexPolygon &region, Vec3 normal,
                            int32_t *out, int capacity, bool *hidden = nullptr) {
  const ClippedPair cp = ClipPair(PatchPolygon(e), e.normal, region, normal);
  if (cp.emitter.n == 0) return 0;
  const Shaft shaft = MakeShaft(cp.emitter, e.normal, cp.receiver, normal);
  const int found = ShaftOccludersBvh(g.occluderBvh, g.occluderBvhBoxes, g.occluders, shaft, e.face, -1, out, capacity);
  if (hidden != nullptr) *hidden = found > 0 && found <= capacity && HiddenByOneOf(g, out, found, cp);
  return found;
}

// What one walk of the shaft between patch e and cluster c tells e's pairs with c's patches: no occluder
// (`clear`), the few to test (with shadow rays: `count` of them from `ids[at]`, PairOccludersAmong), or too many
// to list (each pair walks the BVH itself). One place for the dense rows and the sparse ones, so that both make
// the same decision for every pair.
struct ClusterWalk {
  bool clear = false;
  // One listed occluder hides every segment between patch e and the region (full_occlusion.h): then it hides
  // every pair of e with a patch of the region, since a pair's clipped patches lie in the walk's (the region's
  // plane is the patch's, and the patch lies in the region) and HidesEverySegment's margins grow with the
  // coordinates it reads. Proved once for the walk rather than once for each pair: half the pairs computed on a
  // city are hidden so.
  bool hidden = false;
  int32_t at = -1, count = 0;
  // The occluders for FormFactorPair's `nearby` (none listed where there are none, or too many).
  NearbyOccluders Nearby(const std::vector<int32_t> &ids) const {
    return at < 0 || count == 0 ? NearbyOccluders{} : NearbyOccluders{ids.data() + at, count, hidden};
  }
};

// Listing up to 64 occluders per cluster took the 8x8 city's sparse form factors from 7.6 to 7.1 s (16: 7.25 s).
constexpr int kClusterOccluderList = 64;

// `region`: as ClusterOccluders (the cluster's hull by default).
inline ClusterWalk WalkCluster(const GeometryView &g, const Patch &e, const PatchCluster &c, bool rays,
                               std::vector<int32_t> &ids, const ConvexPolygon *region = nullptr) {
  const int capacity = rays ? kClusterOccluderList : 0;  // exact visibility keeps the BVH's order of occluders
  const size_t from = ids.size();
  ids.resize(from + size_t(capacity) + 1);
  ClusterWalk walk;
  const int found = ClusterOccluders(g, e, region != nullptr ? *region : c.hull, c.normal, ids.data() + from, capacity,
                                     &walk.hidden);
  if (found > capacity) {
    ids.resize(from);
    return walk;
  }
  ids.resize(from + size_t(found));
  walk.clear = found == 0;
  walk.at = int32_t(from);
  walk.count = found;
  return walk;
}

}  // namespace rad
