// PackedNodeList (formfactor/packed_node_list.h): increasing node indices held as variable-length differences,
// read back whole and bisected, against the plain list.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "formfactor/packed_node_list.h"

namespace rad {
namespace {

// Every value from -1 to past the last entry: the last entry at most it, by a scan of the plain list.
void ExpectSameAsThePlainList(const std::vector<int32_t> &plain) {
  const PackedNodeList packed(plain);
  EXPECT_EQ(packed.Size(), plain.size());
  std::vector<int32_t> unpacked(3, 7);  // replaced, not appended to
  packed.Unpack(unpacked);
  ASSERT_EQ(unpacked, plain);
  const int32_t last = plain.empty() ? 0 : plain.back();
  size_t k = 0;
  for (int32_t value = -1; value <= last + 1; value += (value < 5000 ? 1 : 997)) {
    while (k < plain.size() && plain[k] <= value) ++k;
    ASSERT_EQ(packed.LastAtMost(value), k == 0 ? -1 : plain[k - 1]) << "value " << value;
  }
  if (!plain.empty()) EXPECT_EQ(packed.LastAtMost(plain.back()), plain.back());
}

TEST(PackedNodeList, EmptyHoldsNothing) {
  const PackedNodeList empty{std::vector<int32_t>{}};
  EXPECT_TRUE(empty.Empty());
  EXPECT_EQ(empty.Size(), 0u);
  EXPECT_EQ(empty.LastAtMost(1000), -1);
  ExpectSameAsThePlainList({});
}

TEST(PackedNodeList, ReadsBackEveryEntryAndBisectsAcrossItsMarks) {
  ExpectSameAsThePlainList({0});
  ExpectSameAsThePlainList({5});
  std::mt19937 random(12345);
  for (int trial = 0; trial < 40; ++trial) {
    // Differences of 1 to 2^28: one to four bytes each; lists shorter and longer than one mark's stride.
    const int count = int(random() % 300) + 1;
    const int widest = int(random() % 4);
    std::vector<int32_t> plain;
    int32_t value = int32_t(random() % 3) - 1;
    for (int k = 0; k < count; ++k) {
      value += 1 + int32_t(random() % (1u << (7 * widest + 1)));
      if (value < 0) value = 0;
      plain.push_back(value);
    }
    ExpectSameAsThePlainList(plain);
  }
}

TEST(PackedNodeList, SmallDifferencesTakeAboutAByteEach) {
  std::vector<int32_t> plain;
  for (int32_t k = 0; k < 10000; ++k) plain.push_back(3 * k + (k % 3));
  const PackedNodeList packed(plain);
  EXPECT_LT(packed.Bytes(), 1.1 * plain.size() + 64 + 8 * (plain.size() / 32 + 1));
  ExpectSameAsThePlainList(plain);
}

}  // namespace
}  // namespace rad
