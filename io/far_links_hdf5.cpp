#include "io/far_links_hdf5.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "formfactor/patch_tree.h"
#include "io/sparse_rows.h"
#include "util/agree.h"
#include "util/error.h"

namespace rad {

void WriteFarLinks(MPI_Comm comm, hid_t file, const FormFactorRows &f) {
  RAD_CHECK(!f.links.Empty() && f.links.tree, "WriteFarLinks: no far links");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const long long rowCount = (long long)f.RowCount(), firstRow = f.rows.empty() ? 0 : f.rows[0];
  const long long mine = (long long)f.links.target.size();
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
    Write1d(target, links.before, mine, f.links.target.data(), H5T_NATIVE_INT32);
    Write1d(value, links.before, mine, f.links.value.data(), H5T_NATIVE_DOUBLE);
  }
  WriteDoubleAttribute(group, "far_links", double(links.total));
  WriteDoubleAttribute(group, "tree_nodes", double(f.links.tree->nodes.size()));
}

std::vector<long long> InspectFarLinks(hid_t file, const std::string &path, long long n) {
  H5QuietErrors quiet;
  if (H5Lexists(file, "/formfactors/link_ptr", H5P_DEFAULT) <= 0) return {};
  auto length = [&](const char *name) -> long long {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) throw InputError(path + ": far links without " + name);
    H5Handle dset(RAD_H5(H5Dopen2(file, name, H5P_DEFAULT)));
    H5Handle space(RAD_H5(H5Dget_space(dset)));
    if (H5Sget_simple_extent_ndims(space) != 1) throw InputError(path + ": " + name + " is not 1-D");
    hsize_t dims[1] = {0};
    RAD_H5(H5Sget_simple_extent_dims(space, dims, nullptr));
    return (long long)dims[0];
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
  FarLinks &links = f.links;
  links.ptr.assign(1, 0);
  for (long long i : f.rows) links.ptr.push_back(links.ptr.back() + linkPtr[size_t(i) + 1] - linkPtr[size_t(i)]);
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
  // Straight into the links (one element of room when this rank reads none).
  links.target.resize(memDims[0]);
  links.value.resize(memDims[0]);
  RAD_H5(H5Dread(target, H5T_NATIVE_INT32, memSpace, fileSpace, dxpl, links.target.data()));
  RAD_H5(H5Dread(value, H5T_NATIVE_DOUBLE, memSpace, fileSpace, dxpl, links.value.data()));
  links.target.resize(size_t(selected));
  links.value.resize(size_t(selected));

  auto tree = std::make_shared<PatchTree>(BuildPatchTree(patches));
  H5Handle group(RAD_H5(H5Gopen2(file, "formfactors", H5P_DEFAULT)));
  const double nodes = HasAttribute(group, "tree_nodes") ? ReadDoubleAttribute(group, "tree_nodes") : -1;
  std::string problem;
  if (nodes != double(tree->nodes.size()))
    problem = "its far links name the nodes of a patch tree of " + std::to_string((long long)nodes) +
              " nodes, but this program builds one of " + std::to_string(tree->nodes.size()) +
              " from its patches (a file from another version?)";
  const long long n = (long long)patches.size(), nodeCount = (long long)tree->nodes.size();
  for (size_t k = 0; k < links.target.size() && problem.empty(); ++k) {
    const long long t = links.target[k];
    if (t >= nodeCount || t < -n || !std::isfinite(links.value[k]))
      problem = "/formfactors/link_target or link_value: link " + std::to_string(k) + " of this rank's rows names " +
                "target " + std::to_string(t) + " with value " + std::to_string(links.value[k]);
  }
  AgreeOrThrow(comm, problem.empty(), path + ": " + problem);
  links.tree = std::move(tree);
  links.area.resize(patches.size());
  for (size_t j = 0; j < patches.size(); ++j) links.area[j] = patches[j].area;
}

}  // namespace rad
