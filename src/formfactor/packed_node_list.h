// An increasing list of patch-tree node indices held in about a byte per entry rather than four: where the
// hierarchical operator's rows start their walks (ElementWalk, element_links.h). Those lists are disjoint
// subtrees in preorder, so their indices increase, mostly by little: on an 8 x 8 city split to N = 24272 their
// 11.1 M entries took 10.7 MiB as variable-length differences against 42.4 MiB as int32, and at N = 375456 the
// lists as int32 were about 1.4 GiB of a 7.2 GiB peak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rad {

class PackedNodeList {
 public:
  PackedNodeList() = default;
  // `increasing`: strictly increasing, non-negative.
  explicit PackedNodeList(const std::vector<int32_t> &increasing);
  size_t Size() const;
  bool Empty() const { return data_.empty(); }
  size_t Bytes() const { return data_.capacity(); }
  // Every entry, in order, into `out` (replacing what it held).
  void Unpack(std::vector<int32_t> &out) const;
  // The last entry at most `value`, or -1 when every entry is larger (or there is none): a bisection over
  // entries kept whole every kMarkStride, then a few differences read.
  int32_t LastAtMost(int32_t value) const;

 private:
  static constexpr uint32_t kMarkStride = 32;
  // [count][mark count][per mark: entry k * kMarkStride, and the offset of entry k * kMarkStride + 1's
  // difference][each entry's difference from the one before (the first's from -1), 7 bits a byte, low first]
  std::vector<uint8_t> data_;
};

}  // namespace rad
