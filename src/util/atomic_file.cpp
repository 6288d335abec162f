#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/agree.h"
#include "util/error.h"
#include "util/interrupts.h"
#include "util/mpi_check.h"

namespace rad {

std::string PartialPath(const std::string &path) { return path + ".partial"; }

std::string CommitPartial(const std::string &path) {
  const std::string partial = PartialPath(path);
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (!ec) return "";
  const std::string why = "cannot rename " + partial + " into place: " + ec.message();
  std::filesystem::remove(partial, ec);
  return why;
}

void WriteAtomically(const std::string &path, const std::string &what,
                     const std::function<std::string(const std::string &partial)> &write) {
  const std::string partial = PartialPath(path);
  RegisterTemporary(partial);  // removed if a signal stops the write
  std::string why;
  try {
    why = write(partial);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    ForgetTemporary(partial);
    throw;
  }
  if (why.empty()) {
    why = CommitPartial(path);
  } else {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
  }
  ForgetTemporary(partial);
  if (!why.empty()) throw InputError(path + ": cannot write " + what + " (" + why + ")");
}

void WriteFileAtomically(const std::string &path, const std::string &content, const std::string &what,
                         Durability durability) {
  WriteAtomically(path, what, [&](const std::string &partial) -> std::string {
    const int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return std::strerror(errno);
    size_t written = 0;
    while (written < content.size()) {
      const ssize_t w = write(fd, content.data() + written, content.size() - written);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        const std::string why = w < 0 ? std::strerror(errno) : "nothing written";
        close(fd);
        return why;
      }
      written += size_t(w);
    }
    const bool synced = durability == Durability::kOnClose || fsync(fd) == 0;
    const std::string why = synced ? "" : std::strerror(errno);
    if (close(fd) != 0 && synced) return std::strerror(errno);
    return why;
  });
}

CollectivePartialFile::CollectivePartialFile(MPI_Comm comm, const std::string &path)
    : comm_(comm), path_(path), partial_(PartialPath(path)) {
  RegisterTemporary(partial_);  // every rank: whichever a signal reaches first removes it
}

CollectivePartialFile::~CollectivePartialFile() {
  ForgetTemporary(partial_);
  if (committed_) return;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0) std::remove(partial_.c_str());
}

void CollectivePartialFile::Commit() {
  MPI_Barrier(comm_);  // every rank has closed the file
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  int ok = 1;
  ForgetTemporary(partial_);  // from here the name is the result's (or gone)
  if (rank == 0) ok = CommitPartial(path_).empty() ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm_);
  if (!ok) throw InputError(path_ + ": cannot rename " + partial_ + " into place");
  committed_ = true;
}

// Closes the file before partial_ (uncommitted) removes it.
PartialMpiFile::~PartialMpiFile() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

MPI_File PartialMpiFile::Open() {
  const int rc =
      MPI_File_open(comm_, partial_.Partial().c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh_);
  if (rc != MPI_SUCCESS) fh_ = MPI_FILE_NULL;
  AgreeOrThrow(comm_, rc == MPI_SUCCESS,
               partial_.Path() + ": cannot create the output file (does its folder exist and is it writable?)");
  RAD_MPI(MPI_File_set_size(fh_, 0));  // truncate an older file of the same name
  return fh_;
}

void PartialMpiFile::Commit(MPI_Offset expectedBytes) {
  const bool synced = MPI_File_sync(fh_) == MPI_SUCCESS;
  MPI_Offset size = -1;
  const bool sized = MPI_File_get_size(fh_, &size) == MPI_SUCCESS;
  const bool closed = MPI_File_close(&fh_) == MPI_SUCCESS;
  fh_ = MPI_FILE_NULL;
  const bool ok = synced && sized && closed && size == expectedBytes;
  AgreeOrThrow(comm_, ok,
               partial_.Path() + ": cannot write the file: " + std::to_string((long long)size) + " of its " +
                   std::to_string((long long)expectedBytes) + " bytes reached the disk (is it full?); nothing was "
                   "written under that name");
  partial_.Commit();
}

}  // namespace rad
