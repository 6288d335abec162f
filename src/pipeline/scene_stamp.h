// What a matrix of form factors was computed for, so that a file of F that holds no patches (raw, MatrixMarket,
// PETSc) is not used with the patches of another scene of the same size: the scene files' FNV-1a hash, the
// meshing and the patch count. Written as "<matrix>.scene.json" beside such files by `formfactors --raw`,
// `run --raw` and `export`, and as attributes of the HDF5 files (from which `export` passes it on); compared
// when such a file is read with --input. A file without one is checked by its size and patch count alone.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/scene_input.h"
#include "scene/patch.h"

namespace rad {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// FNV-1a 64 of `size` bytes, continuing from `hash`: a fingerprint of the bytes, not a defence against forgery.
constexpr uint64_t kFnv1aStart = 1469598103934665603ULL;
uint64_t Fnv1a(const void *bytes, size_t size, uint64_t hash = kFnv1aStart);
std::string HexHash(uint64_t hash);  // 16 hexadecimal digits

// FNV-1a 64 of the keys and values, in hexadecimal.
std::string HashKeyValues(const KeyValues &values);

// FNV-1a 64 of the files' bytes, in hexadecimal (InputError naming a file that cannot be read).
std::string HashFiles(const std::vector<std::string> &paths);

// FNV-1a 64 of the patches' corners (their bits, in order), in hexadecimal: patches made by other means than a
// meshing of the scene (`run --refine`'s) named by what they are.
std::string HashPatchCorners(const std::vector<Patch> &patches);

// The stamp of `patches` patches made from `input` with the meshing `resolved` (ResolveMeshing's).
KeyValues MakeSceneStamp(const SceneInput &input, const Meshing &resolved, long long patches);

std::string SceneStampPath(const std::string &matrix);

// The keys of `stamp` that `expected` gives another value, as "key (there, here), ..." ("" when none).
std::string StampDifferences(const KeyValues &stamp, const KeyValues &expected);

// Collective: rank 0 writes `stamp` beside `matrix` (atomically), or removes the one there when `stamp` is empty
// (before a matrix is written, so that a stamp never names another matrix's scene).
void WriteSceneStamp(MPI_Comm comm, const std::string &matrix, const KeyValues &stamp);

// Collective: InputError on every rank when the stamp beside `matrix` names another scene; false when there is
// none.
bool CheckSceneStamp(MPI_Comm comm, const std::string &matrix, const KeyValues &expected);

}  // namespace rad
