#include "pipeline/scene_stamp.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "pipeline/outputs.h"
#include "util/agree.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace rad {

uint64_t Fnv1a(const void *bytes, size_t size, uint64_t hash) {
  const auto *p = static_cast<const unsigned char *>(bytes);
  for (size_t k = 0; k < size; ++k) hash = (hash ^ p[k]) * 1099511628211ULL;
  return hash;
}

std::string HexHash(uint64_t hash) {
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string HashFiles(const std::vector<std::string> &paths) {
  uint64_t hash = kFnv1aStart;
  std::vector<char> buffer(1 << 20);
  for (const std::string &path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot read the scene file to fingerprint it");
    while (in) {
      in.read(buffer.data(), std::streamsize(buffer.size()));
      hash = Fnv1a(buffer.data(), size_t(in.gcount()), hash);
    }
  }
  return HexHash(hash);
}

std::string HashKeyValues(const KeyValues &values) {
  uint64_t hash = kFnv1aStart;
  for (const auto &[key, value] : values) {
    hash = Fnv1a(key.data(), key.size() + 1, hash);  // with the terminating 0: ("ab", "c") is not ("a", "bc")
    hash = Fnv1a(value.data(), value.size() + 1, hash);
  }
  return HexHash(hash);
}

std::string HashPatchCorners(const std::vector<Patch> &patches) {
  uint64_t hash = kFnv1aStart;
  for (const Patch &p : patches) {
    hash = Fnv1a(&p.cornerCount, sizeof p.cornerCount, hash);
    for (int k = 0; k < p.cornerCount; ++k) {
      const double xyz[3] = {p.corners[k].x, p.corners[k].y, p.corners[k].z};
      hash = Fnv1a(xyz, sizeof xyz, hash);
    }
  }
  return HexHash(hash);
}

KeyValues MakeSceneStamp(const SceneInput &input, const Meshing &resolved, long long patches) {
  std::vector<std::string> files;
  for (const NamedPath &file : SceneInputPaths(input.files, "")) files.push_back(file.path);
  return {{"scene_files_fnv1a", HashFiles(files)}, {"meshing", resolved.Describe()},
          {"patches", std::to_string(patches)}};
}

std::string SceneStampPath(const std::string &matrix) { return matrix + ".scene.json"; }

std::string StampDifferences(const KeyValues &stamp, const KeyValues &expected) {
  std::string differ;
  for (const auto &[key, here] : expected)
    for (const auto &[other, there] : stamp)
      if (other == key && there != here) differ += (differ.empty() ? "" : ", ") + key + " (" + there + " there, " + here + " here)";
  return differ;
}

void WriteSceneStamp(MPI_Comm comm, const std::string &matrix, const KeyValues &stamp) {
  OnRankZero(comm, [&] {
    const std::string path = SceneStampPath(matrix);
    if (stamp.empty()) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
      return;
    }
    nlohmann::ordered_json j;
    j["matrix"] = std::filesystem::path(matrix).filename().string();
    for (const auto &[key, value] : stamp) j[key] = value;
    WriteFileAtomically(path, j.dump(1) + "\n", "the scene stamp of " + matrix);
  });
}

bool CheckSceneStamp(MPI_Comm comm, const std::string &matrix, const KeyValues &expected) {
  int found = 0;
  OnRankZero(comm, [&] {
    const std::string path = SceneStampPath(matrix);
    if (!std::filesystem::exists(path)) return;
    found = 1;
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    KeyValues stamp;
    try {
      const auto j = nlohmann::json::parse(text);
      for (const auto &[key, value] : j.items())
        if (value.is_string()) stamp.emplace_back(key, value.get<std::string>());
    } catch (const nlohmann::json::exception &e) {
      throw InputError(path + ": not a scene stamp (" + e.what() + "); remove it to read " + matrix +
                       " by its size alone");
    }
    const std::string differ = StampDifferences(stamp, expected);
    if (!differ.empty())
      throw InputError(matrix + ": computed for another scene than --input gives: " + differ + " (from " + path +
                       "); give the scene and meshing it was computed for");
  });
  MPI_Bcast(&found, 1, MPI_INT, 0, comm);
  return found != 0;
}

}  // namespace rad
