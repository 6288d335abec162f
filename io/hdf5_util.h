// Thin helpers over the HDF5 C API: checked calls, RAII handles, attributes.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "util/error.h"

// A checked HDF5 call: a failure is fatal (a broken invariant), or, while an H5WriteGuard is held, recorded for
// the guard to report (an output file that cannot be written).
#define RAD_H5(call)                                                             \
  ([&]() {                                                                       \
    auto _status = (call);                                                       \
    if (_status < 0) ::rad::H5CallFailed(#call, __FILE__, __LINE__);             \
    return _status;                                                              \
  }())

namespace rad {

// RAD_H5's failure: fatal, or recorded while an H5WriteGuard is held.
void H5CallFailed(const char *call, const char *file, int line);

// After a file's writes failed, HDF5 holds a file it cannot close, and finalizing the library (MPI_Finalize
// does) would crash: main then ends the process without it, once it has said why.
void MarkH5LibraryUnusable();
bool H5LibraryUnusable();

// Closes an HDF5 identifier of any kind when it goes out of scope.
class H5Handle {
 public:
  H5Handle() = default;
  explicit H5Handle(hid_t id) : id_(id) {}
  ~H5Handle() { Reset(); }
  H5Handle(const H5Handle &) = delete;
  H5Handle &operator=(const H5Handle &) = delete;
  H5Handle(H5Handle &&o) noexcept : id_(o.id_) { o.id_ = -1; }
  H5Handle &operator=(H5Handle &&o) noexcept {
    Reset();
    id_ = o.id_;
    o.id_ = -1;
    return *this;
  }
  void Reset() {
    if (id_ >= 0) H5Idec_ref(id_);
    id_ = -1;
  }
  // Lets go of the identifier without closing it (a file HDF5 can no longer close).
  void Release() { id_ = -1; }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
};

void WriteStringAttribute(hid_t object, const std::string &name, const std::string &value);
void WriteDoubleAttribute(hid_t object, const std::string &name, double value);
void WriteIntAttribute(hid_t object, const std::string &name, long long value);

// A 1-D dataset of `length` elements of `fileType` in `group`.
H5Handle Create1d(hid_t group, const char *name, hid_t fileType, long long length);
// Collective (the file opened for MPI I/O): elements [start, start + count) of a 1-D dataset from `data` (count
// may be 0 on some ranks).
void Write1d(hid_t dset, long long start, long long count, const void *data, hid_t memType);

// Selects in the 1-D `fileSpace` the union of the runs [ptr[i], ptr[i + 1]) of rows i = rows[0 .. count) (CSR-like
// row pointers; adjacent runs merge into one) and returns the elements selected; none when that is 0.
long long SelectRowRuns(hid_t fileSpace, const std::vector<long long> &ptr, const long long *rows, size_t count);

// Collective: those runs of the 1-D `dset` (SelectRowRuns) written from, or read into, `data` (one after the
// other; `data` holds their total, which may be 0 on some ranks).
void WriteRowRuns(hid_t dset, const std::vector<long long> &ptr, const long long *rows, size_t count, const void *data,
                  hid_t memType);
void ReadRowRuns(hid_t dset, const std::vector<long long> &ptr, const long long *rows, size_t count, void *data,
                 hid_t memType);

bool HasAttribute(hid_t object, const std::string &name);
// Throw InputError (without the file's name: callers add it) if the attribute has an unreadable type.
std::string ReadStringAttribute(hid_t object, const std::string &name);
double ReadDoubleAttribute(hid_t object, const std::string &name);

// Silences HDF5's own error stack printing (we report errors ourselves) while alive.
class H5QuietErrors {
 public:
  H5QuietErrors();
  ~H5QuietErrors();

 private:
  H5E_auto2_t func_ = nullptr;
  void *data_ = nullptr;
};

// Held by every rank while it writes an output file: a failing HDF5 call (a full disk, an I/O error) is recorded
// instead of aborting the job with pages of HDF5 diagnostics, and the calls after it go on failing harmlessly, so
// that every rank reaches the point where the writer asks AnyFailed and all of them stop together with one line.
class H5WriteGuard {
 public:
  H5WriteGuard();
  ~H5WriteGuard();
  H5WriteGuard(const H5WriteGuard &) = delete;
  H5WriteGuard &operator=(const H5WriteGuard &) = delete;
  // Collective over `comm`: whether a call failed on any rank since the guard was taken; `what` gets the first
  // failing call of the lowest rank that had one.
  bool AnyFailed(MPI_Comm comm, std::string *what) const;

 private:
  H5QuietErrors quiet_;
};

}  // namespace rad
