#include "util/interrupts.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

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

extern "C" void OnInterrupt(int signal) {
  for (int k = 0; k < kSlots; ++k)
    if (slotUsed[k].load()) unlink(slotPath[k]);
  if (speakingRank == 0)
    Say(signal == SIGINT ? "radiosity: interrupted (SIGINT): stopped; files being written were removed, none "
                           "was completed\n"
                         : "radiosity: terminated (SIGTERM): stopped; files being written were removed, none "
                           "was completed\n");
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
