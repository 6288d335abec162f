#include "formfactor/element_links.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <cmath>

#include "formfactor/far_field.h"
#include "formfactor/hidden_node.h"
#include "util/progress.h"

namespace rad {

namespace {

// Nodes handed to an element, each with what the failed verdicts above it saw of it (SampleSides, far_field.h;
// receivers as places in the element forest's order): node k's records are sides[end[k - 1], end[k]).
struct Handed {
  std::vector<int32_t> nodes;
  std::vector<uint32_t> end;
  std::vector<SampleSides> sides;
  void Add(int32_t node, const SampleSides *begin, const SampleSides *finish) {
    nodes.push_back(node);
    sides.insert(sides.end(), begin, finish);
    end.push_back(uint32_t(sides.size()));
  }
  uint32_t Begin(size_t k) const { return k == 0 ? 0 : end[k - 1]; }
};

struct Walker {
  const FormFactorGeometry &g;
  const std::vector<Patch> &patches;
  const EmbreeScene &embree;
  const PatchTree &tree;
  const ElementForest &forest;
  double dropBelow;
  uint64_t seed;
  const std::vector<int32_t> &before;   // rows of this rank before each place of the forest's order
  const std::vector<int32_t> &localRow; // per patch
  std::vector<PackedNodeList> &handedOf;  // per element
  std::vector<int32_t> &startOf;                // per row
  std::vector<std::vector<ElementLink>> &links;
  tbb::enumerable_thread_specific<FormFactorCounters> &counters;
  tbb::enumerable_thread_specific<long long> &linkCount;
  tbb::enumerable_thread_specific<long long> &smoothLinkCount;
  Progress &progress;  // the rows reached
  double receiverOpening;  // kReceiverOpening, or a test's own

  bool HasRow(const PatchTreeNode &e) const { return before[size_t(e.first + e.count)] > before[size_t(e.first)]; }

  // Whether the rays between element `e` and `node` agree, on kUnanimousRaysPerTolerance facing rays for each
  // tolerance of the link's estimate `value` (far_field.h). Rays whose points do not face each other, where a
  // patch pair straddles a plane, are not traced: the rays are asked for again, more in proportion, and a
  // verdict still short of them at kMaxRaysPerSample is none (not unanimous: the rows below decide).
  // Where they disagree, what the samples saw is added to `sides`, receivers as places in the forest's order.
  VisibleShareResult UnanimousShare(const PatchTreeNode &e, const PatchTreeNode &node, double value, bool smooth,
                                    std::vector<SampleSides> &sides, HiddenNodeProof &proveHidden) {
    const EmbreeShadowRays occluded{embree};
    const double needed = kUnanimousRaysPerTolerance * std::max(0.0, value) / dropBelow;
    double wanted = std::max(needed, FarLinkRays(value, dropBelow));
    uint32_t tracedBefore = 0;
    for (;;) {
      uint32_t traced = 0;  // rays that faced
      const size_t had = sides.size();
      const VisibleShareResult seen = VisibleShare(patches, forest.tree.order.data() + e.first, e.count, tree, node,
                                                   seed, occluded, traced, wanted, true, &sides, &proveHidden);
      counters.local().AddFarLinkRays(traced, smooth);
      for (size_t k = had; k < sides.size(); ++k) sides[k].receiver += e.first;
      if (seen.proved || !seen.unanimous || double(traced) >= needed) return seen;
      if (traced <= tracedBefore) return {0, false};  // kMaxRaysPerSample reached
      tracedBefore = traced;
      wanted = std::max(2 * wanted, std::ceil(wanted * needed / std::max(1.0, double(traced))));
    }
  }

  // Node `index` for `element`: linked (true), or hidden from all of it (true, nothing to link); false: hand it
  // down.
  // Where the verdict's rays disagree, what they saw is added to `sides`.
  bool Link(int32_t element, const PatchTreeNode &e, int32_t index, bool smooth, std::vector<SampleSides> &sides,
            HiddenNodeProof &proveHidden) {
    Patch at = forest.Receiver(patches, element);
    const double value = OpenedClusterEstimate(tree, at, index, kOpening);
    // Nothing of the node faces the element's centre: its patches may differ, let them decide (a verdict would
    // trace next to no rays, but made its samples: a quarter of an element walk's verdicts on a city).
    if (!(value > 0)) return false;
    const VisibleShareResult seen = UnanimousShare(e, tree.nodes[size_t(index)], value, smooth, sides, proveHidden);
    if (!seen.unanimous) return false;
    if (seen.share == 0) return true;
    // The slope and curvature along the plane, by central differences at half the element's radius: along
    // each axis u and v, and along u + v for the mixed second derivative.
    const Vec3 centre = at.centroid;
    Vec3 u, v;
    ElementAxes(forest, patches, element, u, v);
    const Vec3 axes[3] = {u, v, u + v};
    const double h = 0.5 * e.sphere.radius;
    double first[2], second[3];  // along u and v; and along u, v and u + v
    for (int a = 0; a < 3; ++a) {
      at.centroid = centre + axes[a] * h;
      const double ahead = OpenedClusterEstimate(tree, at, index, kOpening);
      at.centroid = centre - axes[a] * h;
      const double behind = OpenedClusterEstimate(tree, at, index, kOpening);
      if (a < 2) first[a] = (ahead - behind) / (2 * h);
      second[a] = (ahead + behind - 2 * value) / (h * h);
    }
    const double uv = 0.5 * (second[2] - second[0] - second[1]);  // along u + v: uu + 2 uv + vv
    // A row reads value + g . d + d^T C d / 2 at its offset d, within `reach` of the centre. Where that could go
    // below 0 (a node near the element's plane, seen at grazing angles, where the kernel falls to 0 across the
    // element) the model does not hold: the rows below take the node themselves.
    const double reach = e.sphere.radius + Length(e.sphere.center - centre);
    const double lowestCurvature = 0.5 * (second[0] + second[1]) - std::hypot(0.5 * (second[0] - second[1]), uv);
    if (value - std::hypot(first[0], first[1]) * reach + 0.5 * std::min(0.0, lowestCurvature) * reach * reach < 0)
      return false;
    const double gradient[2] = {first[0] * seen.share, first[1] * seen.share};
    const double curvature[3] = {second[0] * seen.share, uv * seen.share, second[1] * seen.share};
    ElementLink link;
    if (!MakeElementLink(index, value * seen.share, gradient, curvature, ElementScale(forest, element), link))
      return false;
    links[size_t(element)].push_back(link);
    if (localRow[size_t(forest.FirstPatch(element))] >= 0) {
      ++linkCount.local();
      smoothLinkCount.local() += smooth;
    }
    return true;
  }

  // `candidates`: what the element `from` handed down (handedOf[from]; -1: the root alone), with what the
  // failed verdicts above saw of each.
  void Walk(int32_t element, const Handed &candidates, int32_t from) {
    const PatchTreeNode &e = forest.tree.nodes[size_t(element)];
    if (!HasRow(e)) return;
    if (e.IsLeaf()) {
      startOf[size_t(localRow[size_t(forest.FirstPatch(element))])] = from;
      progress.Advance();
      return;
    }
    const Patch receiver = forest.Receiver(patches, element);
    const int32_t receiverLo = e.first, receiverHi = e.first + e.count;
    // The nodes still to decide, each with its records in `sides` [begin, end): those handed down that concern
    // this element's receivers, and those of the verdicts that fail here.
    struct Pending {
      int32_t node;
      uint32_t begin, end;
    };
    std::vector<SampleSides> sides;
    std::vector<Pending> stack;
    stack.reserve(candidates.nodes.size());
    for (size_t k = candidates.nodes.size(); k-- > 0;) {
      const uint32_t begin = uint32_t(sides.size());
      for (uint32_t s = candidates.Begin(k); s < candidates.end[k]; ++s)
        if (candidates.sides[s].receiver >= receiverLo && candidates.sides[s].receiver < receiverHi)
          sides.push_back(candidates.sides[s]);
      stack.push_back({candidates.nodes[k], begin, uint32_t(sides.size())});
      PrefetchNode(tree, candidates.nodes[k]);  // a few hundred lines, read in turn below
    }
    Handed handed;
    HiddenNodeProof proveHidden(g, embree);  // verdicts whose first rays are all hidden (hidden_node.h)
    proveHidden.SetReceiverBox(e.boxLo, e.boxHi);
    while (!stack.empty()) {
      Pending pending = stack.back();
      stack.pop_back();
      const int32_t index = pending.node;
      const PatchTreeNode &node = tree.nodes[size_t(index)];
      if (NothingExchanged(receiver, e.boxLo, e.boxHi, node)) continue;
      const bool skippable = NodeBound(receiver, e.sphere, node) < dropBelow;
      const double gap = Length(node.sphere.center - e.sphere.center) - node.sphere.radius;
      const bool smooth = !skippable && SmoothLink(receiver, e.sphere, node, dropBelow);
      const bool opens = !node.IsLeaf() && node.sphere.radius > e.sphere.radius;
      if (skippable && !EstimatedWhole(receiver, e.sphere, node, dropBelow)) {  // its children are linked, or handed down, each on its own
        PrefetchChildren(tree, node);
        stack.push_back({node.right, pending.begin, pending.end});
        stack.push_back({node.left, pending.begin, pending.end});
        continue;
      }
      if ((skippable || smooth) && e.sphere.radius <= receiverOpening * gap) {
        // A verdict above that saw this element's receivers and this node's patches disagree decides this one's
        // without rays.
        const bool known = SidesDisagree(sides.data() + pending.begin, sides.data() + pending.end, receiverLo,
                                         receiverHi, node.first, node.first + node.count);
        if (!known) {
          const size_t had = sides.size();
          if (Link(element, e, index, smooth, sides, proveHidden)) continue;  // a unanimous verdict records nothing
          if (sides.size() > had) {  // the records above and the verdict's own, together
            for (uint32_t s = pending.begin; s < pending.end; ++s) sides.push_back(sides[s]);
            pending = {index, uint32_t(had), uint32_t(sides.size())};
          }
        }
      }
      if (!skippable && opens) {
        PrefetchChildren(tree, node);
        stack.push_back({node.right, pending.begin, pending.end});  // left first
        stack.push_back({node.left, pending.begin, pending.end});
      } else {
        handed.Add(index, sides.data() + pending.begin, sides.data() + pending.end);
      }
    }
    counters.local().farLinksProvedHidden += proveHidden.proved;
    links[size_t(element)].shrink_to_fit();  // pushed one by one: up to twice their size held otherwise
    std::vector<SampleSides>().swap(sides);  // the halves hold their own: free this level's before recursing
    tbb::parallel_invoke([&] { Walk(e.left, handed, element); }, [&] { Walk(e.right, handed, element); });
    const PatchTreeNode &left = forest.tree.nodes[size_t(e.left)], &right = forest.tree.nodes[size_t(e.right)];
    if ((left.IsLeaf() && HasRow(left)) || (right.IsLeaf() && HasRow(right)))  // a row starts from it
      handedOf[size_t(element)] = PackedNodeList(handed.nodes);  // this element's slot: no other thread writes it
  }
};

}  // namespace

double ElementScale(const ElementForest &forest, int32_t element) {
  const double radius = forest.tree.nodes[size_t(element)].sphere.radius;
  return radius > 0 ? radius : 1.0;  // a single point: any length reads the same
}

bool MakeElementLink(int32_t target, double value, const double gradient[2], const double curvature[3], double scale,
                     ElementLink &link) {
  const double terms[kElementLinkShape] = {gradient[0] * scale, gradient[1] * scale, curvature[0] * scale * scale,
                                           curvature[1] * scale * scale, curvature[2] * scale * scale};
  link.target = target;
  link.value = float(value);
  for (int i = 0; i < kElementLinkShape; ++i) {
    // A term over a value of 0 is infinite, one over a value that is not finite is not a number: both refused.
    const double fraction = terms[i] == 0 ? 0.0 : terms[i] / value;
    if (!DoubleToHalfBits(fraction, link.shape[i])) return false;
  }
  return std::isfinite(link.value);
}

void ElementLinkTermsOf(const ElementFarLinks &held, size_t m, long long k, double gradient[2], double curvature[3]) {
  const double scale = ElementScale(*held.forest, held.element[m]);
  double w[kElementLinkTerms];
  ElementLinkWeights(held.value.data(), held.shape.data(), k, w);
  for (int a = 0; a < 2; ++a) gradient[a] = w[1 + a] / scale;
  for (int a = 0; a < 3; ++a) curvature[a] = w[3 + a] / (scale * scale);
}

void ElementAxes(const ElementForest &forest, const std::vector<Patch> &patches, int32_t element, Vec3 &u, Vec3 &v) {
  const Vec3 n = patches[size_t(forest.FirstPatch(element))].normal;
  u = Normalize(Cross(n, std::fabs(n[0]) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0}));
  v = Cross(n, u);
}

ElementWalk WalkElements(const FormFactorGeometry &g, const EmbreeScene &embree, const PatchTree &tree,
                         const ElementForest &forest, const std::vector<long long> &rows, double dropBelow,
                         uint64_t seed, FormFactorCounters &counters, bool showProgress, double receiverOpening) {
  const std::vector<Patch> &patches = g.patches;
  ElementWalk walk;
  walk.links.resize(forest.tree.nodes.size());
  const std::vector<int32_t> localRow = LocalRows(patches.size(), rows);
  std::vector<int32_t> before(patches.size() + 1, 0);
  for (size_t k = 0; k < patches.size(); ++k)
    before[k + 1] = before[k] + (localRow[size_t(forest.tree.order[k])] >= 0 ? 1 : 0);
  walk.handed.resize(forest.tree.nodes.size());
  walk.startOf.assign(rows.size(), -1);
  tbb::enumerable_thread_specific<FormFactorCounters> perThread;
  tbb::enumerable_thread_specific<long long> linkCount(0), smoothLinkCount(0);
  Progress progress("element walk", (long long)rows.size(), showProgress);
  Walker walker{g, patches, embree, tree, forest, dropBelow, seed, before, localRow, walk.handed, walk.startOf,
                walk.links, perThread, linkCount, smoothLinkCount, progress, receiverOpening};
  if (!tree.nodes.empty()) {
    Handed root;
    root.Add(0, nullptr, nullptr);
    tbb::parallel_for(size_t(0), forest.roots.size(), [&](size_t f) { walker.Walk(forest.roots[f], root, -1); });
  }
  progress.Finish();
  for (const FormFactorCounters &c : perThread) counters.Add(c);
  for (long long c : linkCount) walk.linkCount += c;
  for (long long c : smoothLinkCount) walk.smoothLinkCount += c;
  return walk;
}

void ElementWalk::Start(size_t r, std::vector<int32_t> &nodes) const {
  if (startOf[r] < 0) nodes.assign(1, 0);  // the root
  else handed[size_t(startOf[r])].Unpack(nodes);
}

int32_t ElementWalk::StartAtMost(size_t r, int32_t leaf) const {
  return startOf[r] < 0 ? 0 : handed[size_t(startOf[r])].LastAtMost(leaf);
}

ElementFarLinks HoldElementLinks(std::shared_ptr<const ElementForest> forest,
                                 const std::vector<std::vector<ElementLink>> &links, const std::vector<long long> &rows,
                                 const std::vector<Patch> &patches) {
  ElementFarLinks held;
  const ElementForest &f = *forest;
  // The elements with links above the rows, ascending, numbered in `index`, with their plane's axes.
  std::vector<int32_t> index(f.tree.nodes.size(), -1);
  std::vector<Vec3> axisU, axisV;
  std::vector<double> scale;
  for (long long i : rows)
    for (int32_t e = f.leafOf[size_t(i)]; e >= 0; e = f.parent[size_t(e)])
      if (!links[size_t(e)].empty()) index[size_t(e)] = 0;
  held.ptr.assign(1, 0);
  for (size_t e = 0; e < index.size(); ++e) {
    if (index[e] < 0) continue;
    index[e] = int32_t(held.element.size());
    held.element.push_back(int32_t(e));
    for (const ElementLink &l : links[e]) {
      held.target.push_back(l.target);
      held.value.push_back(l.value);
      held.shape.insert(held.shape.end(), l.shape, l.shape + kElementLinkShape);
    }
    held.ptr.push_back((long long)held.target.size());
    axisU.emplace_back();
    axisV.emplace_back();
    ElementAxes(f, patches, int32_t(e), axisU.back(), axisV.back());
    scale.push_back(ElementScale(f, int32_t(e)));
  }
  held.rowPtr.assign(1, 0);
  for (long long i : rows) {
    const Vec3 x = patches[size_t(i)].centroid;
    for (int32_t e = f.leafOf[size_t(i)]; e >= 0; e = f.parent[size_t(e)]) {
      if (index[size_t(e)] < 0) continue;
      const size_t m = size_t(index[size_t(e)]);
      held.rowElement.push_back(int32_t(m));
      const Vec3 offset = x - f.tree.nodes[size_t(e)].areaCentroid;
      held.rowOffset.push_back(Dot(offset, axisU[m]) / scale[m]);
      held.rowOffset.push_back(Dot(offset, axisV[m]) / scale[m]);
    }
    held.rowPtr.push_back((long long)held.rowElement.size());
  }
  held.forest = std::move(forest);
  return held;
}

}  // namespace rad
