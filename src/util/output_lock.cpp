#include "util/output_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "util/agree.h"
#include "util/interrupts.h"

namespace rad {

namespace {

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// Whether process `pid` of this host has ended: no such process, or a zombie (killed, and not reaped: its
// parent was killed with it and the process that adopted it does not reap, as in some containers).
bool Ended(long long pid) {
  if (pid <= 0) return false;
  if (kill(pid_t(pid), 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');  // "pid (command) state ...": the command may hold spaces
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Under Slurm, the job's incarnation: "<job id>.<restart count>" (empty outside Slurm). A job requeued after a
// node failure or its time limit runs again with the same id and a higher restart count, maybe on another
// node: the lock of its earlier incarnation is stale, although its host cannot be asked.
std::string SlurmIncarnation() {
  const char *job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') return "";
  const char *restarts = std::getenv("SLURM_RESTART_COUNT");
  return std::string(job) + "." + (restarts != nullptr && *restarts != '\0' ? restarts : "0");
}

bool SameJobEarlier(const std::string &theirs, const std::string &mine) {
  if (theirs.empty() || mine.empty()) return false;
  const std::string job = theirs.substr(0, theirs.find('.'));
  return job == mine.substr(0, mine.find('.')) && theirs != mine;
}

// Takes `lock`; "" or why not.
std::string Take(const std::string &lock) {
  const std::string me = HostName();
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd >= 0) {
      const std::string text = me + " " + std::to_string(getpid()) + " " + SlurmIncarnation() + "\n";
      const ssize_t written = write(fd, text.data(), text.size());
      close(fd);
      if (written == ssize_t(text.size())) return "";
      unlink(lock.c_str());
      return lock + ": cannot write the lock file";
    }
    if (errno != EEXIST) return "";  // a folder that takes no lock files (checked elsewhere): no lock
    std::string host, incarnation;
    long long pid = 0;
    std::ifstream(lock) >> host >> pid >> incarnation;
    const bool gone = (host == me && Ended(pid)) || SameJobEarlier(incarnation, SlurmIncarnation());
    if (!gone || attempt > 0)
      return "another radiosity run (process " + std::to_string(pid) + " on " + host + ") is writing it (lock " +
             lock + "; remove it if that run is gone)";
    unlink(lock.c_str());  // stale: its run was killed
  }
  return "";
}

}  // namespace

OutputLocks::OutputLocks(MPI_Comm comm, const std::vector<std::string> &outputs) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string why;
  if (rank == 0)
    for (const std::string &output : outputs) {
      if (output.empty()) continue;
      const std::string lock = output + ".lock";
      const std::string refused = Take(lock);
      if (!refused.empty()) {
        why = output + ": " + refused;
        break;
      }
      if (access(lock.c_str(), F_OK) == 0) {
        held_.push_back(lock);
        RegisterTemporary(lock);
      }
    }
  if (!why.empty())
    for (const std::string &lock : held_) {
      ForgetTemporary(lock);
      unlink(lock.c_str());
    }
  if (!why.empty()) held_.clear();
  AgreeOrThrow(comm, why.empty(), why);
}

OutputLocks::~OutputLocks() {
  for (const std::string &lock : held_) {
    ForgetTemporary(lock);
    unlink(lock.c_str());
  }
}

}  // namespace rad
