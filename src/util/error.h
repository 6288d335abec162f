// Two kinds of failure, kept apart on purpose:
//  - InputError: the user's mistake (bad file, bad value). Every rank detects it the same way, the program
//    prints one line naming the file (and line) and exits with code 2, leaving no output behind.
//  - RAD_FATAL: a broken invariant or a failing library call. Prints rank:file:line and calls MPI_Abort,
//    because exit() on one rank would leave the others hanging in a collective.
#pragma once

#include <stdexcept>
#include <string>

namespace rad {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit code for user mistakes (CONTRACTS.md).
constexpr int kExitInputError = 2;
// Exit code when the radiosity iteration diverged or did not reach its tolerance.
constexpr int kExitNotConverged = 3;

// Throws InputError("where: problem") as one line: line ends in names or library messages become blanks, since
// the contract is one line per error.
[[noreturn]] void ThrowInputError(const std::string &where, const std::string &problem);

[[noreturn]] void FatalAt(const char *file, int line, const std::string &message);

}  // namespace rad

#define RAD_FATAL(msg) ::rad::FatalAt(__FILE__, __LINE__, (msg))
#define RAD_CHECK(cond, msg)                                       \
  do {                                                             \
    if (!(cond)) ::rad::FatalAt(__FILE__, __LINE__, (msg));        \
  } while (0)
