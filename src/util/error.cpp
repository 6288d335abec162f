#include "util/error.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rad {

void ThrowInputError(const std::string &where, const std::string &problem) {
  std::string message = where + ": " + problem;
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\r', ' ');
  throw InputError(message);
}

void FatalAt(const char *file, int line, const std::string &message) {
  int initialized = 0, finalized = 0, rank = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "radiosity: fatal: rank %d: %s:%d: %s\n", rank, file, line, message.c_str());
  std::fflush(stderr);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace rad
