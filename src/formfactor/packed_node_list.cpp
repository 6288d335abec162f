#include "formfactor/packed_node_list.h"

#include <cstring>

#include "util/error.h"

namespace rad {

namespace {

constexpr size_t kHeaderBytes = 2 * sizeof(uint32_t);
constexpr size_t kMarkBytes = 2 * sizeof(uint32_t);

uint32_t ReadWord(const uint8_t *at) {
  uint32_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

void AppendWord(std::vector<uint8_t> &data, uint32_t word) {
  const size_t at = data.size();
  data.resize(at + sizeof word);
  std::memcpy(data.data() + at, &word, sizeof word);
}

void AppendDifference(std::vector<uint8_t> &data, uint32_t difference) {
  while (difference >= 0x80) {
    data.push_back(uint8_t(difference | 0x80));
    difference >>= 7;
  }
  data.push_back(uint8_t(difference));
}

uint32_t ReadDifference(const uint8_t *&at) {
  uint32_t difference = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = *at++;
    difference |= uint32_t(byte & 0x7f) << shift;
    if (byte < 0x80) return difference;
  }
}

}  // namespace

PackedNodeList::PackedNodeList(const std::vector<int32_t> &increasing) {
  if (increasing.empty()) return;
  const uint32_t count = uint32_t(increasing.size());
  const uint32_t marks = (count + kMarkStride - 1) / kMarkStride;
  std::vector<uint8_t> differences;
  differences.reserve(increasing.size() + increasing.size() / 4);
  std::vector<uint32_t> markOffsets(marks);
  int32_t before = -1;
  for (uint32_t k = 0; k < count; ++k) {
    RAD_CHECK(increasing[k] > before, "PackedNodeList: the entries must increase");
    AppendDifference(differences, uint32_t(increasing[k] - before));
    if (k % kMarkStride == 0) markOffsets[k / kMarkStride] = uint32_t(differences.size());
    before = increasing[k];
  }
  data_.reserve(kHeaderBytes + marks * kMarkBytes + differences.size());
  AppendWord(data_, count);
  AppendWord(data_, marks);
  const uint32_t stream = uint32_t(kHeaderBytes + marks * kMarkBytes);
  for (uint32_t m = 0; m < marks; ++m) {
    AppendWord(data_, uint32_t(increasing[m * kMarkStride]));
    AppendWord(data_, stream + markOffsets[m]);
  }
  data_.insert(data_.end(), differences.begin(), differences.end());
}

size_t PackedNodeList::Size() const { return data_.empty() ? 0 : ReadWord(data_.data()); }

void PackedNodeList::Unpack(std::vector<int32_t> &out) const {
  out.clear();
  if (data_.empty()) return;
  const uint32_t count = ReadWord(data_.data()), marks = ReadWord(data_.data() + sizeof(uint32_t));
  out.resize(count);
  const uint8_t *at = data_.data() + kHeaderBytes + marks * kMarkBytes;
  int32_t value = -1;
  for (uint32_t k = 0; k < count; ++k) out[k] = value += int32_t(ReadDifference(at));
}

int32_t PackedNodeList::LastAtMost(int32_t value) const {
  if (data_.empty()) return -1;
  const uint32_t count = ReadWord(data_.data()), marks = ReadWord(data_.data() + sizeof(uint32_t));
  const uint8_t *mark = data_.data() + kHeaderBytes;
  auto markValue = [&](uint32_t m) { return int32_t(ReadWord(mark + m * kMarkBytes)); };
  // The last mark at most `value`.
  uint32_t low = 0, high = marks;  // marks [0, low) are at most value, [high, marks) larger
  while (low < high) {
    const uint32_t middle = (low + high) / 2;
    if (markValue(middle) <= value) low = middle + 1;
    else high = middle;
  }
  if (low == 0) return -1;
  const uint32_t m = low - 1;
  int32_t last = markValue(m);
  const uint8_t *at = data_.data() + ReadWord(mark + m * kMarkBytes + sizeof(uint32_t));
  for (uint32_t k = m * kMarkStride + 1; k < count && k < (m + 1) * kMarkStride; ++k) {
    const int32_t next = last + int32_t(ReadDifference(at));
    if (next > value) break;
    last = next;
  }
  return last;
}

}  // namespace rad
