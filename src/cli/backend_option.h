// `--backend auto|cpu|gpu`, shared by formfactors, solve, render and run. The choice is made once, the same on
// every rank: `gpu` without a usable device on some rank is the user's mistake (exit 2); `auto` takes the GPU
// only when every rank has one, and otherwise says in one line that it runs on the CPU.
#pragma once

#include <CLI/CLI.hpp>
#include <mpi.h>

#include <string>

namespace rad {

enum class Backend { kCpu, kGpu };

void AddBackendOption(CLI::App &cmd, std::string &backend);

// Collective. Throws InputError when the GPU is asked for and cannot be had. Prints nothing: commands call
// AnnounceBackend once their input has been validated, so that a bad input still gives exactly one line.
Backend ResolveBackend(MPI_Comm comm, const std::string &requested);

// Rank 0, unless quiet: the one-line notice when `auto` fell back to the CPU.
void AnnounceBackend(MPI_Comm comm, const std::string &requested, Backend backend, bool quiet);

const char *BackendName(Backend backend);

}  // namespace rad
