#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

#include "util/timers.h"

namespace rad {

Progress::Progress(std::string label, long long total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO)) {
  start_ = lastPrint_ = Now();
}

void Progress::Advance(long long count) {
  const long long done = done_.fetch_add(count) + count;
  if (!enabled_) return;
  const double interval = tty_ ? 0.25 : 10.0;
  const double now = Now();
  if (now - lastPrint_ < interval) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (now - lastPrint_ < interval || finished_) return;
  lastPrint_ = now;
  Print(done, false);
}

void Progress::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  // Short work is not worth a line in a log.
  if (tty_ || Now() - start_ > 10.0) Print(done_.load(), true);
}

void Progress::Print(long long done, bool final) {
  const double elapsed = Now() - start_;
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done) / rate : 0;
  const double pct = total_ > 0 ? 100.0 * done / total_ : 100.0;
  std::fprintf(stderr, "%s%s: %lld/%lld (%.1f%%), %.1f/s, %s %.0f s%s", tty_ ? "\r" : "", label_.c_str(), done,
               total_, pct, rate, final ? "took" : "ETA", final ? elapsed : eta, (tty_ && !final) ? "   " : "\n");
  std::fflush(stderr);
}

}  // namespace rad
