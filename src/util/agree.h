// Input errors found on some ranks only (e.g. rank 0 validates a file) must end every rank alike: each rank
// says whether it is fine, and all throw the same InputError (the lowest failing rank's message) if any is not.
#pragma once

#include <mpi.h>

#include <string>

namespace rad {

void AgreeOrThrow(MPI_Comm comm, bool ok, const std::string &message);

// Runs `work` on rank 0 only; an InputError it throws is thrown on every rank of `comm`.
template <typename Work>
void OnRankZero(MPI_Comm comm, Work &&work);

}  // namespace rad

#include "util/error.h"

template <typename Work>
void rad::OnRankZero(MPI_Comm comm, Work &&work) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  bool ok = true;
  std::string message;
  if (rank == 0) {
    try {
      work();
    } catch (const InputError &e) {
      ok = false;
      message = e.what();
    }
  }
  AgreeOrThrow(comm, ok, message);
}
