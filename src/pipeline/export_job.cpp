#include "pipeline/export_job.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <tuple>

#include "formfactor/far_links.h"
#include "pipeline/formfactor_source.h"
#include "pipeline/execution.h"
#include "pipeline/outputs.h"
#include "util/output_lock.h"
#include "io/csr_hdf5.h"
#include "io/matrix_market.h"
#include "io/openfoam_mesh.h"
#include "io/petsc_binary.h"
#include "io/radiosity_file.h"
#include "io/radiosity_file_reader.h"
#include "io/raw_matrix.h"
#include "pipeline/patch_groups.h"
#include "pipeline/scene_stamp.h"
#include "util/atomic_file.h"
#include "io/sparse_rows.h"
#include "util/agree.h"
#include "util/error.h"
#include "util/memory_budget.h"

#include "pipeline/execution.h"
#include "pipeline/outputs.h"

namespace rad {

namespace {


// The HDF5 `input` attribute (one scene file per line) on one line: the files joined by ", ".
std::string OneLine(const std::string &files) {
  std::string text;
  for (char c : files) text += c == '\n' ? std::string(", ") : std::string(1, c);
  return text;
}

// The attributes that describe how F was computed (method, sampling, closure), from an HDF5 source's
// /formfactors/F (or /formfactors of a CSR source), so that the CSR file keeps its provenance.
Attributes SourceAttributes(const std::string &path) {
  std::string packed;  // kind, name, value, each NUL-terminated
  OnRankZero(MPI_COMM_WORLD, [&] {
    if (!IsHdf5File(path)) return;
    RadiosityFileReader file(path);
    const std::string object = file.Has("/formfactors/F") ? "/formfactors/F" : "/formfactors";
    H5Handle o(RAD_H5(H5Oopen(file.File(), object.c_str(), H5P_DEFAULT)));
    H5O_info_t info;
    RAD_H5(H5Oget_info2(o, &info, H5O_INFO_NUM_ATTRS));
    for (hsize_t k = 0; k < info.num_attrs; ++k) {
      H5Handle attr(RAD_H5(H5Aopen_by_idx(o, ".", H5_INDEX_NAME, H5_ITER_INC, k, H5P_DEFAULT, H5P_DEFAULT)));
      char name[256] = {};
      if (H5Aget_name(attr, sizeof name, name) >= ssize_t(sizeof name)) continue;
      H5Handle type(RAD_H5(H5Aget_type(attr))), space(RAD_H5(H5Aget_space(attr)));
      const H5T_class_t kind = H5Tget_class(type);
      if (H5Sget_simple_extent_npoints(space) != 1) continue;  // only scalars describe the method
      if (kind == H5T_STRING) {
        packed += std::string("s") + '\0' + name + '\0' + ReadStringAttribute(o, name) + '\0';
      } else if (kind == H5T_INTEGER || kind == H5T_FLOAT) {
        char number[32];
        std::snprintf(number, sizeof number, "%.17g", ReadDoubleAttribute(o, name));
        packed += std::string("n") + '\0' + name + '\0' + number + '\0';
      }
    }
  });
  BroadcastString(MPI_COMM_WORLD, packed);
  Attributes a;
  size_t pos = 0;
  auto next = [&] {
    const size_t end = packed.find('\0', pos);
    std::string field = packed.substr(pos, end - pos);
    pos = end + 1;
    return field;
  };
  while (pos < packed.size()) {
    const std::string kind = next(), name = next(), value = next();
    if (kind == "s") a.strings[name] = value;
    else a.numbers[name] = std::strtod(value.c_str(), nullptr);
  }
  return a;
}

}  // namespace

// --format groups|energyplus: the view factors between groups of patches (patch_groups.h), written by rank 0.
static int ExportGroupViewFactors(const ExportJobOptions &o, const FormFactorInput &in) {
  const PatchGrouping grouping = ParsePatchGrouping(o.groups);
  Scene scene;
  if (grouping == PatchGrouping::kMaterial) {
    if (o.input.files.empty()) throw InputError("--groups material needs --input: the scene whose materials name the groups");
    scene = LoadSceneInput(o.input);
  }
  const PatchGroups groups = GroupPatches(grouping, in.patches, &scene, o.input.Label());
  const size_t k = groups.names.size();
  constexpr size_t kMostGroups = 4096;  // K^2 sums of 16 bytes on every rank: 256 MiB
  if (k > kMostGroups)
    throw InputError(o.formfactors + ": " + std::to_string(k) + " groups (--groups " + o.groups + ") would need " +
                     FormatBytes(16.0 * double(k) * double(k)) + " per rank for their sums; at most " +
                     std::to_string(kMostGroups) + " (group by material)");
  const std::vector<double> G = GroupViewFactors(MPI_COMM_WORLD, in.f, in.patches, groups);
  std::ostringstream out;
  out.precision(17);
  if (o.format == "groups") {
    out << "# view factors between groups of patches (--groups " << o.groups << "): row a, column b = the share of "
        << "what leaves group a that reaches group b (area-weighted over a's patches); source " << o.formfactors << "\n";
    out << "group,area";
    for (const std::string &name : groups.names) out << ",\"" << name << '"';
    out << "\n";
    for (size_t a = 0; a < k; ++a) {
      out << '"' << groups.names[a] << "\"," << groups.area[a];
      for (size_t b = 0; b < k; ++b) out << ',' << G[a * k + b];
      out << "\n";
    }
  } else {
    if (o.zone.empty()) throw InputError("--format energyplus needs --zone: the Zone or ZoneList the surfaces are in");
    out << "! View factors between the surfaces of " << o.zone << " (radiosity export --groups " << o.groups
        << ", from " << o.formfactors << "); each surface is a group of patches\n";
    out << "ZoneProperty:UserViewFactors:BySurfaceName,\n  " << o.zone << ",  !- Zone or ZoneList Name\n";
    for (size_t a = 0; a < k; ++a)
      for (size_t b = 0; b < k; ++b)
        out << "  " << groups.names[a] << ", " << groups.names[b] << ", " << G[a * k + b]
            << (a + 1 == k && b + 1 == k ? ";" : ",") << "  !- from, to, view factor\n";
  }
  OnRankZero(MPI_COMM_WORLD, [&] { WriteFileAtomically(o.output, out.str(), "the view factors between groups"); });
  if (WorldRank() == 0) {
    double least = HUGE_VAL, most = -HUGE_VAL;
    for (size_t a = 0; a < k; ++a) {
      double sum = 0;
      for (size_t b = 0; b < k; ++b) sum += G[a * k + b];
      least = std::min(least, sum);
      most = std::max(most, sum);
    }
    std::printf("export: %s -> %s (%s): %zu groups (--groups %s), row sums %.9g to %.9g\n", o.formfactors.c_str(),
                o.output.c_str(), o.format.c_str(), k, o.groups.c_str(), least, most);
    std::fflush(stdout);
  }
  return 0;
}

// --format openfoam: the view factors between the case's viewFactorWall faces (each a group of patches: its input
// polygon), written into OUTPUT/constant as its viewFactor radiation model reads them.
static int ExportOpenFoam(const ExportJobOptions &o, const FormFactorInput &in) {
  const OpenFoamBoundary source = ReadOpenFoamBoundary(o.input.files.front());
  const OpenFoamBoundary target = ReadOpenFoamBoundary(o.output);
  auto walls = [](const OpenFoamBoundary &b) {
    std::vector<std::tuple<std::string, long long, long long>> out;
    for (const OpenFoamPatch &p : b.patches)
      if (p.ViewFactorWall()) out.emplace_back(p.name, p.startFace, p.faceCount);
    return out;
  };
  if (walls(source) != walls(target))
    throw InputError(o.output + ": its viewFactorWall patches are not those of " + o.input.files.front() +
                     " (names, first faces and face counts must be the same)");
  const Scene scene = LoadSceneInput(o.input);
  const PatchGroups groups = GroupPatches(PatchGrouping::kPolygon, in.patches, &scene, o.input.Label());
  const size_t k = groups.names.size();
  // Each face's patches must tile it: the form factors are of this case's faces, and none was left out.
  std::vector<double> faceArea(size_t(scene.polygonCount), 0.0);
  for (const Face &face : scene.faces)
    faceArea[size_t(face.polygon)] += 0.5 * Length(NewellNormal(face.corners.data(), int(face.corners.size())));
  if (k != faceArea.size())
    throw InputError(o.formfactors + ": has patches on " + std::to_string(k) + " faces, but " + o.input.Label() +
                     " has " + std::to_string(faceArea.size()) + " viewFactorWall faces (form factors of another mesh, "
                     "or faces of zero area?)");
  for (size_t a = 0; a < k; ++a)
    if (std::abs(groups.area[a] - faceArea[a]) > 1e-9 * std::max(faceArea[a], 1e-300))
      throw InputError(o.formfactors + ": the patches of face " + std::to_string(a) + " cover " +
                       std::to_string(groups.area[a]) + " but the face of " + o.input.Label() + " has area " +
                       std::to_string(faceArea[a]) + " (form factors of another mesh?)");
  // K^2 128-bit sums twice (this rank's and all ranks') and the K^2 view factors, on every rank.
  CheckMemoryNeed(MPI_COMM_WORLD, 40.0 * double(k) * double(k), o.memoryLimit,
                  [&](double worst, double limit, const std::string &limitSource) {
                    return o.output + ": the view factors between " + std::to_string(k) + " faces need " +
                           FormatBytes(worst) + " per rank but it may use " + FormatBytes(limit) + " (" + limitSource +
                           "); OpenFOAM's viewFactor model holds them densely too: agglomerate the faces "
                           "(faceAgglomerate) or use fewer";
                  });
  const std::vector<double> G = GroupViewFactors(MPI_COMM_WORLD, in.f, in.patches, groups);
  OnRankZero(MPI_COMM_WORLD, [&] {
    WriteOpenFoamViewFactors(target, G, k, "view factors from radiosity export of " + o.formfactors);
  });
  if (WorldRank() == 0) {
    double least = HUGE_VAL, most = -HUGE_VAL;
    long long nonzeros = 0;
    for (size_t a = 0; a < k; ++a) {
      double sum = 0;
      for (size_t b = 0; b < k; ++b) sum += G[a * k + b], nonzeros += G[a * k + b] != 0;
      least = std::min(least, sum);
      most = std::max(most, sum);
    }
    std::printf("export: %s -> %s/constant/{F,globalFaceFaces,mapDist,finalAgglom} (openfoam): %zu viewFactorWall "
                "faces, %lld nonzeros, row sums %.9g to %.9g\n",
                o.formfactors.c_str(), target.caseDir.c_str(), k, nonzeros, least, most);
    std::fflush(stdout);
  }
  return 0;
}

int RunExportJob(const ExportJobOptions &o) {
  const int rank = WorldRank();
  std::vector<NamedPath> inputs = SceneInputPaths(o.input.files, o.input.materials);
  inputs.push_back({"--formfactors", o.formfactors});
  const bool openFoam = o.format == "openfoam";
  if (openFoam && (o.input.files.size() != 1 || !IsOpenFoamCase(o.input.files.front())))
    throw InputError("--format openfoam needs --input CASE: the OpenFOAM case (a folder with constant/polyMesh) "
                     "whose boundary faces the form factors are of");
  if (openFoam && !IsOpenFoamCase(o.output))
    throw InputError(o.output + ": not an OpenFOAM case (no constant/polyMesh/boundary); --format openfoam writes "
                     "into the case's constant folder");
  // An OpenFOAM case is both read (its mesh) and written (constant/F and the files beside it).
  const std::string written = openFoam ? OpenFoamCaseDir(o.output) + "/constant/F" : o.output;
  CheckOutputsDistinct(inputs, {{"--output", written}});
  const OutputLocks locks(MPI_COMM_WORLD, {written});
  CheckOutputPath("--output", written);
  if (!std::isfinite(o.dropBelow) || o.dropBelow < 0)
    throw InputError("--drop-below must be a finite number >= 0, not " + std::to_string(o.dropBelow));
  if (o.dropBelow > 0 && (o.format == "groups" || o.format == "energyplus" || openFoam))
    throw InputError("--drop-below applies to the matrix formats, not to the view factors between groups");
  if (!o.precision.empty() && o.format != "csr")
    throw InputError("--precision applies to --format csr only (mtx and petsc store float64, as does raw)");

  // Contiguous rows per rank: each rank's part of a sparse file is then one range of it. A CSR source stays CSR
  // (memory and time follow its stored entries) but for the raw format, which is dense.
  // Beyond the rows: the per-row counts and rank 0's per-row sums, and the blocks the output is formatted in
  // (MatrixMarket text of at most about 48 bytes per entry; 16 for PETSc and CSR), no larger than the rank's entries.
  const bool keepCsr = o.format != "raw";
  MemoryBudget memory;
  const BeforeReadingRows checkMemory = [&](const RowsToRead &read) {
    MemoryModel buffers;
    buffers.bytesPerPatch = 24 + 16;
    const double entries = read.storedEntries >= 0 ? double(read.storedEntries + read.farLinks)
                                                   : double(OwnedCount(read.patches, rank, WorldSize(),
                                                                       Distribution::kBlock)) * double(read.patches);
    buffers.fixedBytes = std::min(entries, double(kExportBlockEntries)) * (o.format == "mtx" ? 48 : 16);
    CheckMemoryBeforeReading(o.formfactors, o.memoryLimit, Distribution::kBlock, buffers, memory)(read);
  };
  FormFactorInput in =
      ReadFormFactorFile(o.formfactors, o.input, o.meshing, Distribution::kBlock, checkMemory, keepCsr);
  // The hierarchical operator's F: its far links spread over their targets' patches, so that the matrix
  // written is the operator the solver uses (entries plus far field); checked against the memory first.
  const long long farLinks = SpreadFarLinks(in.f, o.formfactors, o.memoryLimit);  // this rank's
  if (o.format == "groups" || o.format == "energyplus") return ExportGroupViewFactors(o, in);
  if (openFoam) return ExportOpenFoam(o, in);
  const long long n = in.PatchCount();
  const ExportRows rows = SparseView(in.f, BlockBegin(n, rank, WorldSize()), o.dropBelow);
  const RowCounts counts = CountRows(rows);
  const DropSummary drops = SummariseDrops(MPI_COMM_WORLD, rows, counts);
  if (rank == 0 && !o.quiet)
    std::fprintf(stderr, "radiosity: export: %s (%s, %lld patches) -> %s (%s), %.1f MiB of F per rank (%s)\n",
                 o.formfactors.c_str(), in.layout.c_str(), n, o.output.c_str(), o.format.c_str(),
                 in.f.StoredBytes() / (1 << 20), memory.Describe().c_str());

  char threshold[32] = {};  // shortest form that reads back as the same double: 1e-09, not 1.0000000000000001e-09
  std::to_chars(threshold, threshold + sizeof threshold - 1, o.dropBelow);
  // A file without patches carries its scene's stamp beside it (none left from another matrix, even after a kill).
  const bool stamped = o.format == "mtx" || o.format == "petsc" || o.format == "raw";
  if (stamped) WriteSceneStamp(MPI_COMM_WORLD, o.output, {});
  if (o.format == "mtx") {
    WriteMatrixMarket(MPI_COMM_WORLD, o.output, rows, counts,
                      {"radiosity form factors: F[i][j] = fraction of the energy leaving patch i that reaches patch j",
                       "source: " + o.formfactors + " (" + in.layout + ")", "scene: " + OneLine(in.scene),
                       "patches: " + std::to_string(n),
                       std::string("drop-below: ") + threshold + " (entries with |F_ij| below it left out)"});
  } else if (o.format == "petsc") {
    WritePetscBinary(MPI_COMM_WORLD, o.output, rows, counts);
  } else if (o.format == "raw") {
    // Dense float64 rows with the dropped entries set to 0, in place; float32 rows are widened a block at a
    // time as they are written.
    for (double &v : in.f.f64)
      if (!rows.Keeps(v)) v = 0.0;
    for (float &v : in.f.f32)
      if (!rows.Keeps(double(v))) v = 0.0f;
    WriteRawMatrix(MPI_COMM_WORLD, o.output, in.f);
  } else {
    const Precision precision =
        o.precision.empty() ? in.f.precision : ParsePrecision(o.precision);
    Attributes a = SourceAttributes(o.formfactors);
    // A sparse source's own figures (what the sparse operator dropped) are kept beside the export's.
    for (const char *key : {"drop_below", "nnz", "dropped_entries", "dropped_energy_total", "dropped_row_sum_min",
                            "dropped_row_sum_mean", "dropped_row_sum_max", "dropped_row_sum_max_row"}) {
      const auto it = a.numbers.find(key);
      if (it == a.numbers.end()) continue;
      a.numbers[std::string("source_") + key] = it->second;
      a.numbers.erase(it);
    }
    a.strings["layout"] = "csr";
    long long allLinks = 0;
    MPI_Allreduce(&farLinks, &allLinks, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (allLinks > 0) a.numbers["far_links_spread"] = double(allLinks);
    a.strings["source"] = o.formfactors;
    a.strings["source_layout"] = in.layout;
    a.strings["precision"] = precision == Precision::kDouble ? "double" : "float";
    a.numbers["drop_below"] = o.dropBelow;
    a.numbers["nnz"] = double(drops.kept);
    a.numbers["dropped_entries"] = double(drops.entries);
    a.numbers["dropped_energy_total"] = drops.total;
    a.numbers["dropped_row_sum_min"] = drops.minRow;
    a.numbers["dropped_row_sum_mean"] = drops.meanRow;
    a.numbers["dropped_row_sum_max"] = drops.maxRow;
    a.numbers["dropped_row_sum_max_row"] = double(drops.maxRowIndex);
    RadiosityFileWriter writer(MPI_COMM_WORLD, o.output);
    Attributes file;
    file.strings["input"] = in.scene;
    file.strings["formfactors"] = o.formfactors;
    for (const auto &[key, value] : in.stamp)
      if (key != "patches") file.strings[key] = value;
    writer.WriteFileAttributes(file);
    writer.WritePatches(in.patches);
    WriteCsrFormFactors(MPI_COMM_WORLD, writer.File(), rows, counts, precision, a);
    writer.Commit();
  }

  if (stamped) WriteSceneStamp(MPI_COMM_WORLD, o.output, in.stamp);

  if (rank == 0) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(o.output, ec);
    const double all = double(n) * double(n);
    std::printf("export: %s -> %s (%s): %lld x %lld, %lld nonzeros (%.3g %% of the entries)%s, %llu bytes\n",
                o.formfactors.c_str(), o.output.c_str(), o.format.c_str(), n, n, drops.kept,
                all > 0 ? 100.0 * double(drops.kept) / all : 0.0, o.format == "raw" ? " in a dense file" : " stored",
                ec ? 0ULL : (unsigned long long)bytes);
    if (o.dropBelow > 0)
      std::printf("drop-below %s: %lld entries dropped; energy dropped per row (sum of dropped F_ij): min %.9g "
                  "mean %.9g max %.9g (row %lld); total %.9g of sum(F) = %.9g\n",
                  threshold, drops.entries, drops.minRow, drops.meanRow, drops.maxRow, drops.maxRowIndex, drops.total,
                  drops.matrixSum);
    std::fflush(stdout);
  }
  return 0;
}


}  // namespace rad
