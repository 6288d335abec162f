// Writing the project's HDF5 file (CONTRACTS.md, format_version 1) collectively from all ranks.
// The file is created under a temporary name ("<path>.partial"), `complete` = 1 is the last thing written,
// and rank 0 renames it to its final name only after every rank has closed it. A run that dies leaves only
// the ".partial" file, which no reader takes for a result.
#pragma once

#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "formfactor/form_factor_rows.h"
#include "io/hdf5_util.h"
#include "scene/patch.h"
#include "util/atomic_file.h"
#include "util/decomposition.h"

namespace rad {

struct Attributes {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
};

class RadiosityFileWriter {
 public:
  // Collective. Fails with InputError (on every rank) if the file cannot be created.
  RadiosityFileWriter(MPI_Comm comm, const std::string &path);
  ~RadiosityFileWriter();

  // Collective; rank 0 supplies the data (every rank holds the same patches anyway).
  void WritePatches(const std::vector<Patch> &patches);

  // Collective: each rank writes its own rows of the dense N x N matrix `/formfactors/F`, in their precision, in
  // a few large hyperslab writes (row blocks of at most ~256 MiB per rank).
  void WriteFormFactors(const FormFactorRows &f, const Attributes &attributes);

  // Collective; rank 0 supplies the data. `/radiosity/B` [n][3] and `/radiosity/residual`; the attributes go on
  // the /radiosity group.
  void WriteRadiosity(const std::vector<double> &radiance, const std::vector<double> &residuals,
                      const Attributes &attributes);

  // Collective; rank 0 supplies the data. A Monte Carlo estimate of each patch's outgoing radiance (the path
  // tracer's): `/pathtrace/B` [n][3], read like `/radiosity/B`, and its standard error `/pathtrace/stderr`
  // [n][3]; the attributes go on the /pathtrace group.
  void WritePathTrace(const std::vector<double> &radiance, const std::vector<double> &standardError,
                      const Attributes &attributes);

  // Collective; every rank supplies the same data. `/lightmap/texel` [n][3] int32: each patch's lightmap page, column
  // and row (lightmap/atlas.h); `/lightmap/uv` [n][4][2] float32: its corners' page coordinates in texels (the
  // lightmap UV times the resolution); the attributes (resolution, pages, texel size, gutter) go on /lightmap.
  void WriteLightmapTexels(const std::vector<int32_t> &pageColumnRow, const std::vector<float> &uv,
                           const Attributes &attributes);
  // Collective; rank 0 supplies the data. Per patch values, each a float64 [n] dataset of the group `group`
  // (`radiosity thermal`: /thermal/radiosity, heat_flux, ...), and the group's attributes.
  void WritePatchValues(const std::string &group, const std::vector<std::pair<std::string, std::vector<double>>> &values,
                        const Attributes &attributes);
  // Collective: attributes of the file itself (root group), e.g. the input scene.
  void WriteFileAttributes(const Attributes &attributes);

  // Collective: writes `complete` = 1, closes, renames into place. A file with /patches also gets an XDMF
  // description beside it (XdmfPath), so that ParaView and VisIt open the patches with their per-patch
  // datasets as cell data.
  void Commit();

  // The open file, for writers of further groups (e.g. the CSR form factors of `export`).
  hid_t File() const { return file_; }

 private:
  // A per-patch dataset the XDMF file shows: its path and its values per patch (1 or 3).
  struct CellField {
    std::string path;
    int components;
  };
  void WriteXdmf() const;

  MPI_Comm comm_;
  long long patchCount_ = -1;  // set by WritePatches
  std::vector<CellField> cellFields_;
  CollectivePartialFile partial_;
  H5WriteGuard guard_;  // a failed write fails the file (Commit), not the job
  H5Handle file_;
};

// The XDMF file written beside an HDF5 file of patches: "F.h5" -> "F.xmf" (another name: ".xmf" appended).
std::string XdmfPath(const std::string &hdf5Path);

// Collective: calls io(fileSpace, memSpace, collectiveTransfer, begin, count) for each block of this rank's rows
// [begin, begin + count) of an n x n dataset, in blocks of at most ~256 MiB (`bytesPerValue` per element), with
// the file space selecting those rows (one strided hyperslab); every rank makes the same number of calls.
void ForEachRowBlock(MPI_Comm comm, hid_t dset, long long n, size_t bytesPerValue, const std::vector<long long> &rows,
                     const std::function<void(hid_t, hid_t, hid_t, long long, long long)> &io);

// Rows owned by this rank form an arithmetic sequence (cyclic: step P; block: step 1).
struct RowSequence {
  long long first = 0, step = 1, count = 0;
};
RowSequence AsSequence(const std::vector<long long> &rows);

}  // namespace rad
