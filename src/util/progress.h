// Progress of long work on rank 0: done/total, rate and ETA. On a terminal one line is rewritten in place;
// otherwise (batch jobs, logs) a plain line is printed every few seconds. Thread-safe: any thread may call
// Advance().
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace rad {

class Progress {
 public:
  Progress(std::string label, long long total, bool enabled);
  ~Progress() { Finish(); }
  void Advance(long long count = 1);
  void Finish();

 private:
  void Print(long long done, bool final);
  std::string label_;
  long long total_;
  bool enabled_, tty_;
  double start_, lastPrint_;
  std::atomic<long long> done_{0};
  std::mutex mutex_;
  bool finished_ = false;
};

}  // namespace rad
