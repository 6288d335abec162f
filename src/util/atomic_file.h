// Every output file is written under a temporary name, "<path>.partial", and renamed to its path only once
// complete, so that a failed or interrupted write never leaves a file that looks complete; a failed write
// removes the partial file. The one place that knows the temporary name and how a file is committed.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

namespace rad {

// The name `path` is written under until it is complete.
std::string PartialPath(const std::string &path);

// Renames PartialPath(path) to `path`. Returns "" or, having removed the partial file, why it failed.
std::string CommitPartial(const std::string &path);

// One process writes `path`: `write(partial)` writes the whole file under the partial name and returns "" or
// why it failed; then the file is committed. On failure the partial file is removed and InputError
// "<path>: cannot write <what> (<why>)" is thrown.
void WriteAtomically(const std::string &path, const std::string &what,
                     const std::function<std::string(const std::string &partial)> &write);

// kToDisk: flushed to the disk (fsync) before it replaces the previous file, for what must survive the node and
// not just the process (checkpoints).
enum class Durability { kOnClose, kToDisk };

// WriteAtomically with `content` as the file's bytes.
void WriteFileAtomically(const std::string &path, const std::string &content, const std::string &what = "the file",
                         Durability durability = Durability::kOnClose);

// A file that every rank of `comm` writes together (MPI I/O, parallel HDF5): each opens Partial() with the
// collective call of its library. Commit() is collective, after every rank has closed the file: rank 0 renames
// it into place, and every rank throws InputError if that failed. Destroyed uncommitted, or after a failed
// Commit, rank 0 removes the partial file; the owner closes the file first.
class CollectivePartialFile {
 public:
  CollectivePartialFile(MPI_Comm comm, const std::string &path);
  ~CollectivePartialFile();
  CollectivePartialFile(const CollectivePartialFile &) = delete;
  CollectivePartialFile &operator=(const CollectivePartialFile &) = delete;

  const std::string &Path() const { return path_; }
  const std::string &Partial() const { return partial_; }
  void Commit();

 private:
  MPI_Comm comm_;
  std::string path_, partial_;
  bool committed_ = false;
};

// A CollectivePartialFile written through MPI I/O.
class PartialMpiFile {
 public:
  PartialMpiFile(MPI_Comm comm, const std::string &path) : comm_(comm), partial_(comm, path) {}
  ~PartialMpiFile();
  PartialMpiFile(const PartialMpiFile &) = delete;
  PartialMpiFile &operator=(const PartialMpiFile &) = delete;
  // Collective: opens the partial file for writing (truncated); InputError on every rank if it cannot be created.
  MPI_File Open();
  // Collective: checks that the file holds `expectedBytes` once flushed, closes it and renames it into place; else
  // InputError on every rank (the temporary removed). MPI I/O may report success for writes that a full disk cut
  // short (Open MPI prints "No space left on device" and returns MPI_SUCCESS): a raw file was left at 2 of its
  // 9.5 MB under its final name, exit 0.
  void Commit(MPI_Offset expectedBytes);

 private:
  MPI_Comm comm_;
  CollectivePartialFile partial_;
  MPI_File fh_ = MPI_FILE_NULL;
};

}  // namespace rad
