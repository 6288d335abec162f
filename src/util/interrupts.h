// SIGINT, SIGTERM and SIGUSR1 (Ctrl-C, `scancel`, Slurm's time limit and `--signal=USR1@T`) stop the process at once:
// the temporary files it is writing ("<path>.partial", util/atomic_file.h) are removed, rank 0 says in one line
// what was interrupted, and the exit code is 128 + the signal (130, 143, 138). Nothing half-written is left that a
// later run or reader could take for a result; a previous complete file of the same name is untouched (it is
// only ever replaced by a rename of a finished temporary). Under mpirun the launcher passes the signal to every
// rank, and each removes what it registered.
#pragma once

#include <mpi.h>

#include <string>

namespace rad {

// Installs the handlers (once, after MPI_Init; `rank` decides who speaks).
void InstallInterruptHandlers(int rank);

// While held (rows being computed with checkpoints, pipeline/row_checkpoint.h), a signal is recorded rather
// than acted on: the holder looks at PendingInterrupt() between rounds, writes its checkpoint and calls
// StopForInterrupt. A second signal while one is pending stops the process at once.
void HoldInterrupts(bool hold);
int PendingInterrupt();  // the signal recorded while held, or 0
// Collective: the largest signal recorded on any rank, so that every rank stops, or none (a signal may reach the
// ranks at different moments, or only one of them).
int AgreedPendingInterrupt(MPI_Comm comm);
// Removes the temporaries, says on rank 0 "radiosity: <signal's words>: <what>" and exits with 128 + signal.
[[noreturn]] void StopForInterrupt(int signal, const std::string &what);

// A temporary file being written: removed if a signal stops the process before ForgetTemporary.
void RegisterTemporary(const std::string &path);
void ForgetTemporary(const std::string &path);

}  // namespace rad
