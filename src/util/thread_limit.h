// The one place that bounds how many threads TBB may use in this process (every parallel loop of the library
// runs on TBB). A limit holds while the object lives; limits nest, the innermost one wins, as with
// tbb::global_control, which this wraps so that nothing else names it.
#pragma once

#include <tbb/global_control.h>

#include <cstddef>

namespace rad {

class ThreadLimit {
 public:
  explicit ThreadLimit(int threads)
      : control_(tbb::global_control::max_allowed_parallelism, std::size_t(threads > 0 ? threads : 1)) {}
  ThreadLimit(const ThreadLimit &) = delete;
  ThreadLimit &operator=(const ThreadLimit &) = delete;

 private:
  tbb::global_control control_;
};

}  // namespace rad
