// The hierarchical operator's receivers grouped: inside each polygon, whole elements of patches (ElementForest,
// patch_tree.h) take the far links that every one of their patches would take alike, so that a link's estimate
// and shadow rays are paid once per element rather than once per patch.
//
// From each face's root element down, a node of the patch tree becomes a link of the element when (1) every
// entry between them is below the tolerance (NodeBound with the element's sphere and largest patch), or the
// link is smooth (SmoothLink, far_field.h: its linear model's error bound is within the tolerance), (2) the
// element is narrower than kReceiverOpening of its distance to the node, and (3) the element's shadow rays to
// the node agree (all seen or all hidden; a hidden node takes no link). Else the node is opened (when larger
// than the element) or handed down to the element's halves, with what the failed verdict's rays saw: a half
// and a node between which it saw a ray pass and a ray stopped are known to disagree, and trace no verdict
// (SampleSides, far_field.h). At a single patch the row's own walk
// (sparse_form_factors.h) starts from what was handed down. A link holds the node's estimate at the element's
// area-weighted centre and its gradient and curvature along the element's plane; each row reads it at its own
// centroid (ElementFarLinks, form_factor_rows.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/embree_scene.h"
#include "formfactor/form_factor_rows.h"
#include "formfactor/geometry.h"
#include "formfactor/packed_node_list.h"
#include "formfactor/patch_tree.h"

namespace rad {

// As held (ElementFarLinks): 20 bytes a link while the elements' walk holds them.
struct ElementLink {
  int32_t target = 0;  // node of the patch tree
  float value = 0;     // sum over the node of F from the element's centre (visible share included)
  // Its derivatives along the element's axes u and v (ElementAxes) and its second derivatives uu, uv and vv, as
  // its shape (ElementLinkWeights, form_factor_rows.h). The curvature: the linear model alone missed the
  // kernel's curvature across the element, 6.6e-4 of a row (summed without sign, 1.8e-4 with) in a closed room
  // of 7776 patches; with it 3.1e-5 (4e-7), against the estimates at each patch. Held along the plane rather
  // than as a 3 x 3 form: half the bytes (a 58076-patch city's peak was 9 % higher with the form).
  uint16_t shape[kElementLinkShape] = {};
};

// The length that element `element`'s links' shapes and its rows' offsets are measured in: its bounding
// sphere's radius (the same on every rank), so that offsets are at most about 1 and shapes are of the order of
// the model's relative change across the element.
double ElementScale(const ElementForest &forest, int32_t element);

// The link to `target` of value `value`, gradient and curvature (along the element's axes) held as its shape
// at `scale`; false where the shape does not fit binary16 (a term over 65504 times the value, or a gradient
// or curvature with a value of 0): such a model is no estimate, and `link` is then not to be used.
bool MakeElementLink(int32_t target, double value, const double gradient[2], const double curvature[3], double scale,
                     ElementLink &link);

// Link k of `held` with its gradient and curvature back in absolute terms, for files (far_links_hdf5.h).
void ElementLinkTermsOf(const ElementFarLinks &held, size_t m, long long k, double gradient[2], double curvature[3]);

// The axes u, v of element `element`'s plane (its first patch's normal n: u is n x (1, 0, 0), or n x (0, 1, 0)
// when n is near the x axis, normalised, and v = n x u): how its links' gradient and curvature and its rows'
// offsets are held, and how readers of the file recover them (element_axes).
void ElementAxes(const ElementForest &forest, const std::vector<Patch> &patches, int32_t element, Vec3 &u, Vec3 &v);

struct ElementWalk {
  // Per element of the forest, the nodes it hands down, kept where a child is a single patch: that row's own
  // walk starts from them. Two sibling patches start from the same list, held once and packed (the lists were,
  // per row, about 900 nodes on a city of 26284 patches, and growing with N).
  std::vector<PackedNodeList> handed;
  std::vector<int32_t> startOf;  // per row: the element whose `handed` its walk starts from; -1: the root
  // The nodes row r's walk starts from, into `nodes`: disjoint subtrees in preorder (increasing indices).
  void Start(size_t r, std::vector<int32_t> &nodes) const;
  // Of those, the one that may hold leaf `leaf` (the last at most its index), or -1.
  int32_t StartAtMost(size_t r, int32_t leaf) const;
  std::vector<std::vector<ElementLink>> links;  // per element of the forest (those walked here)
  long long linkCount = 0;  // links of the elements whose first patch is a row here (each counted once)
  long long smoothLinkCount = 0;  // of those, the ones taken smooth (SmoothLink, far_field.h)
};

// An element takes a far link to a node only while it is narrower than this share of its distance to the node:
// across the element the link's share changes by about its radius over that distance, which the link's slope
// follows to first order. On an 8 x 8 city (N = 7032) at tolerance 3e-4 the slope took B from 1.6e-3 of the
// dense B to 3.9e-4 (with each row's own visibility); sharing the element's shadow rays without condition (3)
// left 5.6e-3: shadows cross elements. A twentieth rather than a tenth took the far error per row (operator
// check, rays) from 1.07e-4 to 9.7e-5 at N = 7032, 1.79e-4 to 1.53e-4 on a 12 x 12 city (N = 15020) and 1.66e-4
// to 1.37e-4 at N = 24272, for 7 to 15 % more time: smaller elements see less of the small shadows that cross
// a link only in part.
constexpr double kReceiverOpening = 0.05;

// The elements above `rows` walked at tolerance `dropBelow` (collective over nothing: every rank walks the
// elements that hold one of its rows, each the same way, so that neither the rank nor the thread count shows).
// Shadow rays with `seed` (counted in `counters`), a verdict that finds its first rays hidden proved hidden whole
// by one of g's occluders where one does (hidden_node.h). `showProgress`: the rows reached, as a progress line (a
// quarter of a large city's run). `receiverOpening`: kReceiverOpening but in tests of the elements' maths on
// scenes too small for many elements to be a twentieth of their distance from a node.
ElementWalk WalkElements(const FormFactorGeometry &g, const EmbreeScene &embree, const PatchTree &tree,
                         const ElementForest &forest, const std::vector<long long> &rows, double dropBelow,
                         uint64_t seed, FormFactorCounters &counters, bool showProgress = false,
                         double receiverOpening = kReceiverOpening);

// The links that `rows` read, per element of the forest (`links`, as WalkElements leaves them, or as read from
// a file), held once per element: the elements above the rows that have links, and per row its elements (from
// its leaf up) with its centroid's offset from each one's centre.
ElementFarLinks HoldElementLinks(std::shared_ptr<const ElementForest> forest,
                                 const std::vector<std::vector<ElementLink>> &links, const std::vector<long long> &rows,
                                 const std::vector<Patch> &patches);

}  // namespace rad
