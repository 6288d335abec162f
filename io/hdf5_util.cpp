#include "io/hdf5_util.h"

#include <algorithm>

namespace rad {

H5Handle Create1d(hid_t group, const char *name, hid_t fileType, long long length) {
  const hsize_t dims[1] = {hsize_t(length)};
  H5Handle space(RAD_H5(H5Screate_simple(1, dims, nullptr)));
  return H5Handle(RAD_H5(H5Dcreate2(group, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
}

namespace {

// A dataset of no elements has no storage, and HDF5's collective write to it fails on the undefined address
// even with nothing selected (a hierarchical file of a scene whose polygons are one patch each has no element
// links). Every rank sees the same extent, so every rank skips the write alike.
bool HoldsNothing(hid_t fileSpace) { return H5Sget_simple_extent_npoints(fileSpace) == 0; }

}  // namespace

void Write1d(hid_t dset, long long start, long long count, const void *data, hid_t memType) {
  H5Handle fileSpace(RAD_H5(H5Dget_space(dset)));
  if (HoldsNothing(fileSpace)) return;
  const hsize_t memDims[1] = {hsize_t(std::max<long long>(count, 1))};
  H5Handle memSpace(RAD_H5(H5Screate_simple(1, memDims, nullptr)));
  if (count > 0) {
    const hsize_t s[1] = {hsize_t(start)}, c[1] = {hsize_t(count)};
    RAD_H5(H5Sselect_hyperslab(fileSpace, H5S_SELECT_SET, s, nullptr, c, nullptr));
  } else {
    RAD_H5(H5Sselect_none(fileSpace));
    RAD_H5(H5Sselect_none(memSpace));
  }
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  RAD_H5(H5Dwrite(dset, memType, memSpace, fileSpace, dxpl, data));
}

long long SelectRowRuns(hid_t fileSpace, const std::vector<long long> &ptr, const long long *rows, size_t count) {
  long long elements = 0, runStart = -1, runEnd = -1;
  bool any = false;
  auto flush = [&] {
    if (runEnd <= runStart) return;
    const hsize_t s[1] = {hsize_t(runStart)}, c[1] = {hsize_t(runEnd - runStart)};
    RAD_H5(H5Sselect_hyperslab(fileSpace, any ? H5S_SELECT_OR : H5S_SELECT_SET, s, nullptr, c, nullptr));
    any = true;
  };
  for (size_t k = 0; k < count; ++k) {
    const size_t i = size_t(rows[k]);
    const long long a = ptr[i], b = ptr[i + 1];
    elements += b - a;
    if (a == runEnd) {
      runEnd = b;
    } else {
      flush();
      runStart = a;
      runEnd = b;
    }
  }
  flush();
  if (!any) RAD_H5(H5Sselect_none(fileSpace));
  return elements;
}

namespace {

template <typename Transfer>
void TransferRowRuns(hid_t dset, const std::vector<long long> &ptr, const long long *rows, size_t count,
                     Transfer &&transfer) {
  H5Handle fileSpace(RAD_H5(H5Dget_space(dset)));
  if (HoldsNothing(fileSpace)) return;
  const long long selected = SelectRowRuns(fileSpace, ptr, rows, count);
  const hsize_t memDims[1] = {hsize_t(std::max<long long>(selected, 1))};
  H5Handle memSpace(RAD_H5(H5Screate_simple(1, memDims, nullptr)));
  if (selected == 0) RAD_H5(H5Sselect_none(memSpace));
  H5Handle dxpl(RAD_H5(H5Pcreate(H5P_DATASET_XFER)));
  RAD_H5(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
  transfer(memSpace, fileSpace, dxpl);
}

}  // namespace

void WriteRowRuns(hid_t dset, const std::vector<long long> &ptr, const long long *rows, size_t count, const void *data,
                  hid_t memType) {
  TransferRowRuns(dset, ptr, rows, count, [&](hid_t mem, hid_t file, hid_t dxpl) {
    RAD_H5(H5Dwrite(dset, memType, mem, file, dxpl, data));
  });
}

void ReadRowRuns(hid_t dset, const std::vector<long long> &ptr, const long long *rows, size_t count, void *data,
                 hid_t memType) {
  TransferRowRuns(dset, ptr, rows, count, [&](hid_t mem, hid_t file, hid_t dxpl) {
    RAD_H5(H5Dread(dset, memType, mem, file, dxpl, data));
  });
}

void WriteStringAttribute(hid_t object, const std::string &name, const std::string &value) {
  H5Handle type(RAD_H5(H5Tcopy(H5T_C_S1)));
  RAD_H5(H5Tset_size(type, value.empty() ? 1 : value.size()));
  RAD_H5(H5Tset_strpad(type, H5T_STR_NULLTERM));
  H5Handle space(RAD_H5(H5Screate(H5S_SCALAR)));
  H5Handle attr(RAD_H5(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)));
  RAD_H5(H5Awrite(attr, type, value.empty() ? "" : value.c_str()));
}

void WriteDoubleAttribute(hid_t object, const std::string &name, double value) {
  H5Handle space(RAD_H5(H5Screate(H5S_SCALAR)));
  H5Handle attr(RAD_H5(H5Acreate2(object, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT)));
  RAD_H5(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value));
}

void WriteIntAttribute(hid_t object, const std::string &name, long long value) {
  H5Handle space(RAD_H5(H5Screate(H5S_SCALAR)));
  H5Handle attr(RAD_H5(H5Acreate2(object, name.c_str(), H5T_NATIVE_LLONG, space, H5P_DEFAULT, H5P_DEFAULT)));
  RAD_H5(H5Awrite(attr, H5T_NATIVE_LLONG, &value));
}

bool HasAttribute(hid_t object, const std::string &name) { return H5Aexists(object, name.c_str()) > 0; }

namespace {
// Attributes come from users' files: one of the wrong type is their mistake, not a broken invariant.
herr_t QuietRead(hid_t attr, hid_t memType, void *buffer) {
  H5QuietErrors quiet;
  return H5Aread(attr, memType, buffer);
}

// An attribute of a user's file that cannot be opened: a damaged file, not a broken invariant.
hid_t OpenAttribute(hid_t object, const std::string &name) {
  H5QuietErrors quiet;
  const hid_t attr = H5Aopen(object, name.c_str(), H5P_DEFAULT);
  if (attr < 0) throw InputError("attribute '" + name + "' cannot be opened (a damaged file?)");
  return attr;
}

hid_t AttributeType(hid_t attr, const std::string &name) {
  H5QuietErrors quiet;
  const hid_t type = H5Aget_type(attr);
  if (type < 0) throw InputError("attribute '" + name + "' has no readable type (a damaged file?)");
  return type;
}
}  // namespace

std::string ReadStringAttribute(hid_t object, const std::string &name) {
  H5Handle attr(OpenAttribute(object, name));
  H5Handle fileType(AttributeType(attr, name));
  if (H5Tget_class(fileType) != H5T_STRING) return "";
  if (H5Tis_variable_str(fileType) > 0) {
    H5Handle memType(RAD_H5(H5Tcopy(H5T_C_S1)));
    RAD_H5(H5Tset_size(memType, H5T_VARIABLE));
    // h5py writes str attributes as UTF-8: reading needs the same character set (no conversion exists).
    RAD_H5(H5Tset_cset(memType, H5Tget_cset(fileType)));
    char *value = nullptr;
    if (QuietRead(attr, memType, &value) < 0) throw InputError("attribute '" + name + "' cannot be read as a string");
    std::string out = value ? value : "";
    H5free_memory(value);
    return out;
  }
  const size_t size = H5Tget_size(fileType);
  std::vector<char> buf(size + 1, '\0');
  H5Handle memType(RAD_H5(H5Tcopy(H5T_C_S1)));
  RAD_H5(H5Tset_size(memType, size + 1));
  RAD_H5(H5Tset_cset(memType, H5Tget_cset(fileType)));
  if (QuietRead(attr, memType, buf.data()) < 0) throw InputError("attribute '" + name + "' cannot be read as a string");
  return std::string(buf.data());
}

double ReadDoubleAttribute(hid_t object, const std::string &name) {
  H5Handle attr(OpenAttribute(object, name));
  double value = 0;
  if (QuietRead(attr, H5T_NATIVE_DOUBLE, &value) < 0) throw InputError("attribute '" + name + "' is not a number");
  return value;
}

H5QuietErrors::H5QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

H5QuietErrors::~H5QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

namespace {
int writeGuards = 0;         // H5WriteGuards held (the main thread writes files)
bool writeFailed = false;
std::string firstFailure;
}  // namespace

namespace {
bool libraryUnusable = false;
}  // namespace

void MarkH5LibraryUnusable() { libraryUnusable = true; }
bool H5LibraryUnusable() { return libraryUnusable; }

void H5CallFailed(const char *call, const char *file, int line) {
  if (writeGuards == 0) FatalAt(file, line, std::string("HDF5 call failed: ") + call);
  if (!writeFailed) firstFailure = call;
  writeFailed = true;
}

H5WriteGuard::H5WriteGuard() {
  if (writeGuards++ == 0) {
    writeFailed = false;
    firstFailure.clear();
  }
}

H5WriteGuard::~H5WriteGuard() { --writeGuards; }

bool H5WriteGuard::AnyFailed(MPI_Comm comm, std::string *what) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = writeFailed ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return false;
  std::string call = rank == first ? firstFailure : std::string();
  int length = int(call.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  call.resize(size_t(length));
  MPI_Bcast(call.data(), length, MPI_CHAR, first, comm);
  if (what) *what = call;
  return true;
}

}  // namespace rad
