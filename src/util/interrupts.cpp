#include "util/interrupts.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "util/mpi_check.h"

namespace rad {

namespace {

// Fixed slots, so that the handler reads them without allocating or locking: a path is written whole before
// its slot is marked used, and unmarked before it is cleared (writers take the mutex; the handler does not).
constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;
char slotPath[kSlots][kPathBytes];
std::atomic<bool> slotUsed[kSlots];
int speakingRank = 0;
std::mutex slotsMutex;

void Say(const char *text) {
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

std::atomic<bool> held{false};
std::atomic<int> pending{0};

const char *SignalWords(int signal) {
  switch (signal) {
    case SIGINT: return "radiosity: interrupted (SIGINT): ";
    case SIGUSR1: return "radiosity: signalled (SIGUSR1): ";
    default: return "radiosity: terminated (SIGTERM): ";
  }
}

void RemoveTemporaries() {
  for (int k = 0; k < kSlots; ++k)
    if (slotUsed[k].load()) unlink(slotPath[k]);
}

extern "C" void OnInterrupt(int signal) {
  int none = 0;
  if (held.load() && pending.compare_exchange_strong(none, signal)) return;  // the holder stops at its next round
  RemoveTemporaries();
  if (speakingRank == 0) {
    Say(SignalWords(signal));
    Say("stopped; files being written were removed, none was completed\n");
  }
  _exit(128 + signal);
}

}  // namespace

void InstallInterruptHandlers(int rank) {
  speakingRank = rank;
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

void HoldInterrupts(bool hold) { held.store(hold); }

int PendingInterrupt() { return pending.load(); }

int AgreedPendingInterrupt(MPI_Comm comm) {
  int mine = PendingInterrupt(), agreed = 0;
  RAD_MPI(MPI_Allreduce(&mine, &agreed, 1, MPI_INT, MPI_MAX, comm));
  return agreed;
}

void StopForInterrupt(int signal, const std::string &what) {
  RemoveTemporaries();
  if (speakingRank == 0) {
    const std::string line = SignalWords(signal) + what + "\n";
    Say(line.c_str());
  }
  _exit(128 + signal);
}

void RegisterTemporary(const std::string &path) {
  if (path.size() >= kPathBytes) return;  // not removable on a signal; still removed on any error
  const std::lock_guard<std::mutex> lock(slotsMutex);
  for (int k = 0; k < kSlots; ++k)
    if (!slotUsed[k].load()) {
      std::memcpy(slotPath[k], path.c_str(), path.size() + 1);
      slotUsed[k].store(true);
      return;
    }
}

void ForgetTemporary(const std::string &path) {
  const std::lock_guard<std::mutex> lock(slotsMutex);
  for (int k = 0; k < kSlots; ++k)
    if (slotUsed[k].load() && path == slotPath[k]) {
      slotUsed[k].store(false);
      slotPath[k][0] = '\0';
      return;
    }
}

}  // namespace rad
