// One run at a time per output: before a command writes, rank 0 takes "<output>.lock" for each of its outputs
// (created exclusively, holding the host, the process id and, under Slurm, the job id and restart count), and
// gives them back when the command ends. A second run on the same outputs is refused up front with one line
// naming the first, rather than the two leaving the HDF5 file of one and the raw file of the other, both
// complete. A lock is stale and taken over when its process is gone (on this host, a zombie included) or when it
// was taken by an earlier incarnation of this Slurm job (requeued, maybe onto another node); SIGINT, SIGTERM and
// SIGUSR1 remove the locks with the temporaries (util/interrupts.h).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace rad {

class OutputLocks {
 public:
  // Collective: InputError on every rank when an output is locked by a live run. Empty paths are skipped.
  OutputLocks(MPI_Comm comm, const std::vector<std::string> &outputs);
  ~OutputLocks();
  OutputLocks(const OutputLocks &) = delete;
  OutputLocks &operator=(const OutputLocks &) = delete;

 private:
  std::vector<std::string> held_;  // rank 0's lock files
};

}  // namespace rad
