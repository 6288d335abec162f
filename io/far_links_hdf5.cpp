#include "io/far_links_hdf5.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "formfactor/element_links.h"
#include "formfactor/patch_tree.h"
#include "io/sparse_rows.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/mpi_check.h"

namespace rad {

namespace {

// The element links (ElementFarLinks) of f, each element's written once: by the rank of its first patch, which
// holds it. element_link_ptr runs over every node of the forest.
void WriteElementLinks(MPI_Comm comm, hid_t group, const FormFactorRows &f) {
  const ElementFarLinks &e = f.links.elements;
  const ElementForest &forest = *e.forest;
  const size_t elements = forest.tree.nodes.size();
  std::vector<long long> count(elements, 0), mine;
  std::vector<int32_t> target;
  std::vector<double> value, gradient, curvature;
  for (size_t m = 0; m < e.element.size(); ++m) {
    if (!std::binary_search(f.rows.begin(), f.rows.end(), (long long)forest.FirstPatch(e.element[m]))) continue;
    mine.push_back(e.element[m]);
    count[size_t(e.element[m])] = e.ptr[m + 1] - e.ptr[m];
    for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) {
      target.push_back(e.target[size_t(k)]);
      value.push_back(e.value[size_t(k)]);
      double g[2], h[3];
      ElementLinkTermsOf(e, m, k, g, h);
      gradient.insert(gradient.end(), g, g + 2);
      curvature.insert(curvature.end(), h, h + 3);
    }
  }
  RAD_MPI(MPI_Allreduce(MPI_IN_PLACE, count.data(), int(elements), MPI_LONG_LONG, MPI_SUM, comm));
  std::vector<long long> ptr(elements + 1, 0), ptr2(elements + 1, 0), ptr3(elements + 1, 0);
  for (size_t k = 0; k < elements; ++k) {
    ptr[k + 1] = ptr[k] + count[k];
    ptr2[k + 1] = 2 * ptr[k + 1];
    ptr3[k + 1] = 3 * ptr[k + 1];
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  H5Handle ptrSet = Create1d(group, "element_link_ptr", H5T_STD_I64LE, (long long)ptr.size());
  Write1d(ptrSet, 0, rank == 0 ? (long long)ptr.size() : 0, ptr.data(), H5T_NATIVE_LLONG);
  H5Handle targetSet = Create1d(group, "element_link_target", H5T_STD_I32LE, ptr.back());
  H5Handle valueSet = Create1d(group, "element_link_value", H5T_IEEE_F64LE, ptr.back());
  H5Handle gradientSet = Create1d(group, "element_link_gradient", H5T_IEEE_F64LE, 2 * ptr.back());
  H5Handle curvatureSet = Create1d(group, "element_link_curvature", H5T_IEEE_F64LE, 3 * ptr.back());
  WriteRowRuns(targetSet, ptr, mine.data(), mine.size(), target.data(), H5T_NATIVE_INT32);
  WriteRowRuns(valueSet, ptr, mine.data(), mine.size(), value.data(), H5T_NATIVE_DOUBLE);
  WriteRowRuns(gradientSet, ptr2, mine.data(), mine.size(), gradient.data(), H5T_NATIVE_DOUBLE);
  WriteRowRuns(curvatureSet, ptr3, mine.data(), mine.size(), curvature.data(), H5T_NATIVE_DOUBLE);
  // The elements themselves, for readers without this program: each one's patches and centre.
  std::vector<int32_t> first(elements), patchCount(elements);
  std::vector<double> centre(3 * elements);
  for (size_t k = 0; k < elements; ++k) {
    const PatchTreeNode &node = forest.tree.nodes[k];
    first[k] = node.first;
    patchCount[k] = node.count;
    for (int a = 0; a < 3; ++a) centre[3 * k + size_t(a)] = node.areaCentroid[a];
  }
  const long long all = rank == 0 ? (long long)elements : 0;
  Write1d(Create1d(group, "element_first", H5T_STD_I32LE, (long long)elements), 0, all, first.data(), H5T_NATIVE_INT32);
  Write1d(Create1d(group, "element_count", H5T_STD_I32LE, (long long)elements), 0, all, patchCount.data(),
          H5T_NATIVE_INT32);
  Write1d(Create1d(group, "element_centre", H5T_IEEE_F64LE, 3 * (long long)elements), 0, 3 * all, centre.data(),
          H5T_NATIVE_DOUBLE);
  Write1d(Create1d(group, "element_order", H5T_STD_I32LE, (long long)forest.tree.order.size()), 0,
          rank == 0 ? (long long)forest.tree.order.size() : 0, forest.tree.order.data(), H5T_NATIVE_INT32);
  WriteDoubleAttribute(group, "element_links", double(ptr.back()));
  WriteDoubleAttribute(group, "forest_nodes", double(elements));
}

// A 1-D dataset's length, or -1 when `name` is not there; InputError naming `path` when it is not 1-D.
long long Length1d(hid_t file, const std::string &path, const char *name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return -1;
  H5Handle dset(RAD_H5(H5Dopen2(file, name, H5P_DEFAULT)));
  H5Handle space(RAD_H5(H5Dget_space(dset)));
  if (H5Sget_simple_extent_ndims(space) != 1) throw InputError(path + ": " + name + " is not 1-D");
  hsize_t dims[1] = {0};
  RAD_H5(H5Sget_simple_extent_dims(space, dims, nullptr));
  return (long long)dims[0];
}

// The element links that f.rows read, when the file has them: the forest rebuilt from `patches`, element_link_ptr
// read whole and checked, then the links of the elements above the rows. A problem is returned (empty: none).
std::string ReadElementLinks(hid_t file, const std::string &path, const std::vector<Patch> &patches,
                             long long treeNodes, FormFactorRows &f) {
  H5QuietErrors quiet;
  const long long ptrLength = Length1d(file, path, "/formfactors/element_link_ptr");
  if (ptrLength < 0) return "";
  auto forest = std::make_shared<const ElementForest>(BuildElementForest(patches));
  const long long elements = (long long)forest->tree.nodes.size();
  if (ptrLength != elements + 1)
    return "/formfactors/element_link_ptr has " + std::to_string(ptrLength) + " values, but this program builds " +
           std::to_string(elements) + " elements from its patches (a file from another version?)";
  const long long links = Length1d(file, path, "/formfactors/element_link_target");
  // Files from versions before the curvature hold each link's gradient in x, y, z (element_link_slope) and no
  // curvature: their links are linear, and the gradient is taken along the element's axes here.
  const bool linear = Length1d(file, path, "/formfactors/element_link_gradient") < 0;
  const char *gradientName = linear ? "/formfactors/element_link_slope" : "/formfactors/element_link_gradient";
  const long long perLink = linear ? 3 : 2;
  if (links < 0 || Length1d(file, path, "/formfactors/element_link_value") != links ||
      Length1d(file, path, gradientName) != perLink * links ||
      (!linear && Length1d(file, path, "/formfactors/element_link_curvature") != 3 * links))
    return "/formfactors/element_link_target, element_link_value, element_link_gradient (2 per link) and "
           "element_link_curvature (3 per link) must all be there and agree in length";
  std::vector<long long> ptr(static_cast<size_t>(ptrLength));
  {
    H5Handle dset(RAD_H5(H5Dopen2(file, "/formfactors/element_link_ptr", H5P_DEFAULT)));
    RAD_H5(H5Dread(dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr.data()));
  }
  for (long long k = 0; k < elements; ++k)
    if (ptr[size_t(k) + 1] < ptr[size_t(k)] || ptr[0] != 0)
      return "/formfactors/element_link_ptr decreases at element " + std::to_string(k) + " (or does not start at 0)";
  if (ptr.back() != links)
    return "/formfactors/element_link_ptr ends at " + std::to_string(ptr.back()) + " but there are " +
           std::to_string(links) + " element links";
  // The elements above this rank's rows that hold links, ascending, and their links.
  std::vector<uint8_t> above(size_t(elements), 0);
  for (long long i : f.rows)
    for (int32_t e = forest->leafOf[size_t(i)]; e >= 0; e = forest->parent[size_t(e)]) above[size_t(e)] = 1;
  std::vector<long long> held, ptrGradient(ptr.size()), ptr3(ptr.size());
  for (long long e = 0; e < elements; ++e)
    if (above[size_t(e)] && ptr[size_t(e) + 1] > ptr[size_t(e)]) held.push_back(e);
  for (size_t k = 0; k < ptr.size(); ++k) {
    ptrGradient[k] = perLink * ptr[k];
    ptr3[k] = 3 * ptr[k];
  }
  long long count = 0;
  for (long long e : held) count += ptr[size_t(e) + 1] - ptr[size_t(e)];
  std::vector<int32_t> target(static_cast<size_t>(count));
  std::vector<double> value(static_cast<size_t>(count)), gradient(size_t(perLink) * static_cast<size_t>(count)),
      curvature(3 * static_cast<size_t>(count), 0.0);
  auto read = [&](const char *name, const std::vector<long long> &runs, void *data, hid_t type) {
    H5Handle dset(RAD_H5(H5Dopen2(file, name, H5P_DEFAULT)));
    ReadRowRuns(dset, runs, held.data(), held.size(), data, type);
  };
  read("/formfactors/element_link_target", ptr, target.data(), H5T_NATIVE_INT32);
  read("/formfactors/element_link_value", ptr, value.data(), H5T_NATIVE_DOUBLE);
  read(gradientName, ptrGradient, gradient.data(), H5T_NATIVE_DOUBLE);
  if (!linear) read("/formfactors/element_link_curvature", ptr3, curvature.data(), H5T_NATIVE_DOUBLE);
  std::vector<std::vector<ElementLink>> perElement(static_cast<size_t>(elements));
  // Held as ElementLink: a value float cannot hold, or a shape binary16 cannot, is refused, as one that is not
  // finite.
  size_t k = 0;
  for (long long e : held) {
    Vec3 u, v;
    ElementAxes(*forest, patches, int32_t(e), u, v);
    for (long long c = ptr[size_t(e)]; c < ptr[size_t(e) + 1]; ++c, ++k) {
      const double *g = &gradient[size_t(perLink) * k], *h = &curvature[3 * k];
      double along[2] = {g[0], g[1]};
      if (linear) {
        const Vec3 slope{g[0], g[1], g[2]};
        along[0] = Dot(slope, u);
        along[1] = Dot(slope, v);
      }
      ElementLink link;
      const bool holds = MakeElementLink(target[k], value[k], along, h, ElementScale(*forest, int32_t(e)), link);
      if (target[k] < 0 || target[k] >= treeNodes || !holds)
        return "/formfactors/element_link_*: link " + std::to_string(c) + " (element " + std::to_string(e) +
               ") names node " + std::to_string(target[k]) + " with value " + std::to_string(value[k]) +
               " (a node of the tree, a finite value, and a gradient and curvature within 65504 times the value " +
               "per the element's radius and its square, are what a link holds)";
      perElement[size_t(e)].push_back(link);
    }
  }
  f.links.elements = HoldElementLinks(forest, perElement, f.rows, patches);
  return "";
}

}  // namespace

void WriteFarLinks(MPI_Comm comm, hid_t file, const FormFactorRows &f) {
  RAD_CHECK(!f.links.Empty() && f.links.tree, "WriteFarLinks: no far links");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const long long rowCount = (long long)f.RowCount(), firstRow = f.rows.empty() ? 0 : f.rows[0];
  const long long mine = f.links.LinkCount();
  const RankOffset links = ExclusiveScan(comm, mine);
  H5Handle group(RAD_H5(H5Gopen2(file, "formfactors", H5P_DEFAULT)));
  {
    // As indptr: rank 0 also writes the leading 0, so that every rank's part is one range.
    H5Handle dset = Create1d(group, "link_ptr", H5T_STD_I64LE, f.n + 1);
    std::vector<long long> ptr;
    if (rank == 0) ptr.push_back(0);
    for (long long r = 0; r < rowCount; ++r) ptr.push_back(links.before + f.links.ptr[size_t(r) + 1]);
    Write1d(dset, rank == 0 ? 0 : firstRow + 1, (long long)ptr.size(), ptr.data(), H5T_NATIVE_LLONG);
  }
  H5Handle target = Create1d(group, "link_target", H5T_STD_I32LE, links.total);
  H5Handle value = Create1d(group, "link_value", H5T_IEEE_F64LE, links.total);
  if (links.total > 0) {
    // The targets whole and the values widened to float64, the file's types, a block at a time (a whole rank's
    // at once would take 12 bytes a link beside their 4), every rank in each block's collective writes.
    constexpr long long kBlock = 1LL << 22;
    long long blocks = (mine + kBlock - 1) / kBlock, allBlocks = 0;
    RAD_MPI(MPI_Allreduce(&blocks, &allBlocks, 1, MPI_LONG_LONG, MPI_MAX, comm));
    std::vector<double> wide;
    for (long long b = 0; b < allBlocks; ++b) {
      const long long first = std::min(mine, b * kBlock), count = std::min(mine, first + kBlock) - first;
      const std::vector<int32_t> targets = f.links.TargetsUnpacked(first, count);
      Write1d(target, links.before + first, count, targets.data(), H5T_NATIVE_INT32);
      wide.resize(size_t(count));
      for (long long k = 0; k < count; ++k) wide[size_t(k)] = f.links.Value(size_t(first + k));
      Write1d(value, links.before + first, count, wide.data(), H5T_NATIVE_DOUBLE);
    }
  }
  WriteDoubleAttribute(group, "far_links", double(links.total));
  WriteDoubleAttribute(group, "tree_nodes", double(f.links.tree->nodes.size()));
  if (f.links.elements.forest) WriteElementLinks(comm, group, f);
}

std::vector<long long> InspectFarLinks(hid_t file, const std::string &path, long long n) {
  H5QuietErrors quiet;
  if (H5Lexists(file, "/formfactors/link_ptr", H5P_DEFAULT) <= 0) return {};
  auto length = [&](const char *name) {
    const long long found = Length1d(file, path, name);
    if (found < 0) throw InputError(path + ": far links without " + name);
    return found;
  };
  if (length("/formfactors/link_ptr") != n + 1)
    throw InputError(path + ": /formfactors/link_ptr must have N + 1 = " + std::to_string(n + 1) + " values");
  const long long links = length("/formfactors/link_target");
  if (length("/formfactors/link_value") != links)
    throw InputError(path + ": /formfactors/link_target and link_value differ in length");
  std::vector<long long> ptr(size_t(n) + 1);
  H5Handle dset(RAD_H5(H5Dopen2(file, "/formfactors/link_ptr", H5P_DEFAULT)));
  RAD_H5(H5Dread(dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptr.data()));
  if (ptr[0] != 0) throw InputError(path + ": /formfactors/link_ptr[0] must be 0");
  for (long long i = 0; i < n; ++i)
    if (ptr[size_t(i) + 1] < ptr[size_t(i)])
      throw InputError(path + ": /formfactors/link_ptr decreases at row " + std::to_string(i));
  if (ptr.back() != links)
    throw InputError(path + ": /formfactors/link_ptr ends at " + std::to_string(ptr.back()) + " but there are " +
                     std::to_string(links) + " links");
  return ptr;
}

void ReadFarLinks(MPI_Comm comm, hid_t file, const std::string &path, const std::vector<long long> &linkPtr,
                  const std::vector<Patch> &patches, FormFactorRows &f) {
  // The union of this rank's rows' runs of links (adjacent rows merge), read collectively in row order.
  H5Handle target(RAD_H5(H5Dopen2(file, "/formfactors/link_target", H5P_DEFAULT)));
  H5Handle value(RAD_H5(H5Dopen2(file, "/formfactors/link_value", H5P_DEFAULT)));
  H5Handle fileSpace(RAD_H5(H5Dget_space(target)));
  const long long selected = SelectRowRuns(fileSpace, linkPtr, f.rows.data(), f.rows.size());
  const hsize_t memDims[1] = {hsize_t(std::max<long long>(selected, 1))};
  H5Handle memSpace(RAD_H5(H5Screate_simple(1, memDims, nullptr)));
  if (selected == 0) RAD_H5(H5Sselect_none(memSpace));
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  // The targets whole and the values through float (one element of room when this rank reads none), then held
  // as FarLinks holds them: each row sorted by name (files of earlier versions keep a row's links in the walk's
  // order), the values in binary16 (FarLinkBits: values this program wrote come back to the bit).
  std::vector<int32_t> targets(memDims[0]);
  std::vector<float> read(memDims[0]);
  RAD_H5(H5Dread(target, H5T_NATIVE_INT32, memSpace, fileSpace, dxpl, targets.data()));
  RAD_H5(H5Dread(value, H5T_NATIVE_FLOAT, memSpace, fileSpace, dxpl, read.data()));
  targets.resize(size_t(selected));
  read.resize(size_t(selected));
  std::vector<uint16_t> bits(read.size(), 0);

  auto tree = std::make_shared<PatchTree>(BuildPatchTree(patches));
  H5Handle group(RAD_H5(H5Gopen2(file, "formfactors", H5P_DEFAULT)));
  const double nodes = HasAttribute(group, "tree_nodes") ? ReadDoubleAttribute(group, "tree_nodes") : -1;
  std::string problem;
  if (nodes != double(tree->nodes.size()))
    problem = "its far links name the nodes of a patch tree of " + std::to_string((long long)nodes) +
              " nodes, but this program builds one of " + std::to_string(tree->nodes.size()) +
              " from its patches (a file from another version?)";
  const long long n = (long long)patches.size(), nodeCount = (long long)tree->nodes.size();
  for (size_t k = 0; k < targets.size() && problem.empty(); ++k) {
    const long long t = targets[k];
    if (t >= nodeCount || t < -n || !FarLinkBits(read[k], bits[k]))
      problem = "/formfactors/link_target or link_value: link " + std::to_string(k) + " of this rank's rows names " +
                "target " + std::to_string(t) + " with value " + std::to_string(read[k]) +
                " (a node of the tree or a patch, and a finite value below 64: a sum of form factors)";
  }
  std::vector<float>().swap(read);
  AgreeOrThrow(comm, problem.empty(), path + ": " + problem);
  FarLinks &links = f.links;
  links.Begin(nodeCount, n);
  links.nameLow.reserve(targets.size());
  links.value.reserve(targets.size());
  std::vector<uint64_t> keys;
  size_t at = 0;
  for (long long i : f.rows) {
    const size_t count = size_t(linkPtr[size_t(i) + 1] - linkPtr[size_t(i)]);
    SortFarLinksByName(links.nodes, targets.data() + at, bits.data() + at, count, keys);
    links.AppendRow(targets.data() + at, bits.data() + at, count);
    at += count;
  }
  std::vector<int32_t>().swap(targets);
  std::vector<uint16_t>().swap(bits);
  problem = ReadElementLinks(file, path, patches, nodeCount, f);
  AgreeOrThrow(comm, problem.empty(), path + ": " + problem);
  links.tree = std::move(tree);
  links.area.resize(patches.size());
  for (size_t j = 0; j < patches.size(); ++j) links.area[j] = patches[j].area;
}

}  // namespace rad
