#include "util/agree.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace rad {

void AgreeOrThrow(MPI_Comm comm, bool ok, const std::string &message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int failingRank = ok ? INT_MAX : rank, lowest = 0;
  MPI_Allreduce(&failingRank, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == INT_MAX) return;
  int length = rank == lowest ? int(message.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, lowest, comm);
  std::vector<char> text(size_t(length) + 1, '\0');
  if (rank == lowest) std::copy(message.begin(), message.end(), text.begin());
  MPI_Bcast(text.data(), length, MPI_CHAR, lowest, comm);
  throw InputError(std::string(text.data()));
}

}  // namespace rad
