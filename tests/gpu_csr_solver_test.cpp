// The GPU's solve of CSR rows (cuda/gpu_csr_solver.h). Host tests (they run everywhere), through the row maths
// the kernels share (solver/sparse_transport.h): the far field of the hierarchical operator's links equals each
// link's value times the area-weighted mean of B over its target, summed here straight from the definition; the
// GPU's grouped Gauss-Seidel sweep is point Gauss-Seidel, and converges to a dense LU solve. GPU tests (skipped
// without a device): the device against a dense LU solve (Jacobi, Gauss-Seidel, float values), far links
// against the CPU's CSR solve, and the white furnace from CSR rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cuda/device_info.h"
#include "cuda/gpu_solver.h"
#include "formfactor/far_links.h"
#include "formfactor/geometry.h"
#include "formfactor/patch_tree.h"
#include "solver/radiosity_solver.h"
#include "solver/sparse_transport.h"
#include "tests/dense_solve.h"
#include "tests/test_scenes.h"
#include "util/decomposition.h"
#include "util/rng.h"

namespace rad {
namespace {

double Unit(uint32_t a, uint32_t b, uint32_t stream) { return ToUnit(Philox(a, b, 0, 0, 17, stream).v[0]); }

// A sparse system on the patches of a unit cube (so that far links have a tree to point into): about a third
// of each row's entries stored, the row summing to 0.4 to 0.7 (with `linkShare` of that left for far links),
// reflectance in [0.2, 0.8), emission on every seventh patch.
struct SparseSystem {
  std::vector<Patch> patches;
  long long n = 0;
  std::vector<double> dense;  // n x n, the stored entries
  std::vector<double> rho, e;
  explicit SparseSystem(double linkShare = 0) {
    Meshing meshing;
    meshing.maxPatchSize = 1.0 / 6;  // 216 patches: 72 rows for each of 3 ranks, two groups of 32 and a partial one
    patches = BuildFormFactorGeometry(test::UnitCube(), meshing).patches;
    n = (long long)patches.size();
    dense.assign(size_t(n * n), 0.0);
    for (long long i = 0; i < n; ++i) {
      double sum = 0;
      for (long long j = 0; j < n; ++j)
        if (i != j && Unit(uint32_t(i), uint32_t(j), 1) < 0.33) sum += dense[size_t(i * n + j)] = Unit(uint32_t(i), uint32_t(j), 2);
      const double target = (0.4 + 0.3 * Unit(uint32_t(i), 0, 3)) * (1 - linkShare);
      for (long long j = 0; j < n; ++j) dense[size_t(i * n + j)] *= target / sum;
      for (int c = 0; c < 3; ++c) {
        rho.push_back(0.2 + 0.6 * Unit(uint32_t(i), uint32_t(c), 4));
        e.push_back(i % 7 == 0 ? 1.0 + double(c) : 0.0);
      }
    }
  }
  double MaxEmission() const { return *std::max_element(e.begin(), e.end()); }
  // `rows` of the system as CSR (columns ascending).
  FormFactorRows Csr(const std::vector<long long> &rows) const {
    FormFactorRows f;
    f.n = n;
    f.rows = rows;
    f.storage = Storage::kCsr;
    f.indptr.push_back(0);
    std::vector<int32_t> columns;
    for (long long i : rows) {
      for (long long j = 0; j < n; ++j)
        if (dense[size_t(i * n + j)] != 0) {
          columns.push_back(int32_t(j));
          f.f64.push_back(dense[size_t(i * n + j)]);
        }
      f.indptr.push_back((long long)columns.size());
    }
    f.AssignColumns(columns);
    return f;
  }
  LocalSystem Local(const FormFactorRows &f) const {
    LocalSystem s;
    s.F = &f;
    s.reflectance = rho;
    s.emission = e;
    return s;
  }
};

std::vector<long long> AllRows(long long n) {
  std::vector<long long> rows(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) rows[size_t(i)] = i;
  return rows;
}

// Far links for the rows of f, pointing into a tree over the system's patches: a few links per row to nodes
// and single patches, and links of the elements of a forest, each row reading the elements above its patch.
// Values are small and positive, so the rows still sum below 1.
void AddFarLinks(const SparseSystem &s, FormFactorRows &f) {
  FarLinks &l = f.links;
  l.tree = std::make_shared<PatchTree>(BuildPatchTree(s.patches, 4));
  for (const Patch &p : s.patches) l.area.push_back(p.area);
  const uint32_t nodes = uint32_t(l.tree->nodes.size());
  l.Begin(nodes, s.n);
  std::vector<int32_t> targets;
  std::vector<uint16_t> values;
  std::vector<uint64_t> keys;
  for (size_t r = 0; r < f.RowCount(); ++r) {
    const uint32_t i = uint32_t(f.rows[r]);
    targets.clear();
    values.clear();
    for (uint32_t k = 0; k < 1 + i % 4; ++k) {
      const bool node = Unit(i, k, 5) < 0.7;
      targets.push_back(node ? int32_t(Unit(i, k, 6) * nodes) : -(int32_t(Unit(i, k, 6) * double(s.n)) + 1));
      uint16_t bits = 0;
      EXPECT_TRUE(FarLinkBits(0.02 * Unit(i, k, 7), bits));
      values.push_back(bits);
    }
    SortFarLinksByName(l.nodes, targets.data(), values.data(), targets.size(), keys);
    l.AppendRow(targets.data(), values.data(), targets.size());
  }
  auto forest = std::make_shared<ElementForest>(BuildElementForest(s.patches));
  ElementFarLinks &e = l.elements;
  e.forest = forest;
  // Every inner node of the forest holds links.
  for (int32_t m = 0; m < int32_t(forest->tree.nodes.size()); ++m)
    if (!forest->tree.nodes[size_t(m)].IsLeaf()) e.element.push_back(m);
  e.ptr.push_back(0);
  for (size_t q = 0; q < e.element.size(); ++q) {
    for (uint32_t k = 0; k < 3; ++k) {
      e.target.push_back(int32_t(Unit(uint32_t(q), k, 8) * nodes));
      e.value.push_back(float(0.01 * Unit(uint32_t(q), k, 9)));
      for (uint32_t a = 0; a < uint32_t(kElementLinkShape); ++a) {  // the link's shape: any binary16 of [-0.5, 0.5)
        uint16_t half = 0;
        ASSERT_TRUE(DoubleToHalfBits(Unit(uint32_t(q), k + 8 * a, 10) - 0.5, half));
        e.shape.push_back(half);
      }
    }
    e.ptr.push_back((long long)e.target.size());
  }
  e.rowPtr.push_back(0);
  for (size_t r = 0; r < f.RowCount(); ++r) {
    const size_t i = size_t(f.rows[r]);
    for (int32_t node = forest->parent[size_t(forest->leafOf[i])]; node >= 0; node = forest->parent[size_t(node)]) {
      const auto at = std::lower_bound(e.element.begin(), e.element.end(), node);
      e.rowElement.push_back(int32_t(at - e.element.begin()));
      const Vec3 centre = forest->tree.nodes[size_t(node)].areaCentroid, d = s.patches[i].centroid - centre;
      e.rowOffset.insert(e.rowOffset.end(), {d.x + 0.5 * d.z, d.y - 0.25 * d.z});  // any two coordinates
    }
    e.rowPtr.push_back((long long)e.rowElement.size());
  }
}

// Row r's far field for channel c of b (n x 3), from the definition: each link's value times b at its patch or
// the area-weighted mean of b over its node's patches; each element's links read at the row's centroid
// (value + g . d + d^T C d / 2, d its two offsets along the element's plane, g the link's gradient and C the
// symmetric matrix of its curvature uu, uv, vv) times their node's mean.
double FarFieldByDefinition(const FormFactorRows &f, size_t r, const std::vector<double> &b, int c) {
  const FarLinks &l = f.links;
  const size_t n = size_t(f.n);
  auto mean = [&](int32_t node) {
    const PatchTreeNode &k = l.tree->nodes[size_t(node)];
    double weighted = 0, area = 0;
    for (int32_t q = k.first; q < k.first + k.count; ++q) {
      const size_t j = size_t(l.tree->order[size_t(q)]);
      weighted += l.area[j] * b[j + size_t(c) * n];
      area += l.area[j];
    }
    return weighted / area;
  };
  double sum = 0;
  const std::vector<int32_t> targets = l.TargetsUnpacked();
  for (long long k = l.ptr[r]; k < l.ptr[r + 1]; ++k) {
    const int32_t t = targets[size_t(k)];
    sum += l.Value(size_t(k)) * (t >= 0 ? mean(t) : b[size_t(-(t + 1)) + size_t(c) * n]);
  }
  const ElementFarLinks &e = l.elements;
  for (long long q = e.rowPtr[r]; q < e.rowPtr[r + 1]; ++q) {
    const size_t m = size_t(e.rowElement[size_t(q)]);
    const double *d = &e.rowOffset[2 * size_t(q)];
    for (long long k = e.ptr[m]; k < e.ptr[m + 1]; ++k) {
      double g[2], h[3];  // its gradient and curvature, from its shape: value times shape
      for (int a = 0; a < 2; ++a) g[a] = e.value[size_t(k)] * HalfBitsToDouble(e.shape[5 * size_t(k) + size_t(a)]);
      for (int a = 0; a < 3; ++a) h[a] = e.value[size_t(k)] * HalfBitsToDouble(e.shape[5 * size_t(k) + 2 + size_t(a)]);
      const double matrix[2][2] = {{h[0], h[1]}, {h[1], h[2]}};
      double read = e.value[size_t(k)];
      for (int a = 0; a < 2; ++a) {
        read += g[a] * d[a];
        for (int b2 = 0; b2 < 2; ++b2) read += 0.5 * d[a] * matrix[a][b2] * d[b2];
      }
      sum += read * mean(e.target[size_t(k)]);
    }
  }
  return sum;
}

std::vector<double> SomeIterate(long long n) {  // not the emission, so that every row changes in a sweep
  std::vector<double> b(3 * size_t(n));
  for (size_t k = 0; k < b.size(); ++k) b[k] = 0.3 + Unit(uint32_t(k), 0, 11);
  return b;
}

TEST(GpuCsrSolver, FarFieldIsEachLinksShareOfTheMeans) {
  const SparseSystem s(0.3);
  for (int ranks : {1, 3}) {
    FormFactorRows f = s.Csr(OwnedRows(s.n, ranks - 1, ranks, Distribution::kCyclic));
    AddFarLinks(s, f);
    ASSERT_FALSE(f.links.elements.Empty());
    const FlatTreeNodes nodes = FlattenTreeNodes(f.links);
    const FarFieldView view = ViewFarField(f.links, nodes, [](const auto &host) { return host.data(); });
    const std::vector<double> b = SomeIterate(s.n);
    std::vector<double> far;
    FarFieldHost(view, (long long)f.RowCount(), b.data(), s.n, far);
    ASSERT_EQ(far.size(), 3 * f.RowCount());
    double smallest = HUGE_VAL;
    for (size_t r = 0; r < f.RowCount(); ++r)
      for (int c = 0; c < 3; ++c) {
        const double want = FarFieldByDefinition(f, r, b, c);
        smallest = std::min(smallest, want);
        EXPECT_NEAR(far[3 * r + size_t(c)], want, 1e-14) << "ranks " << ranks << ", row " << f.rows[r];
      }
    EXPECT_GT(smallest, 0.0);  // every row reads some far field
  }
}

// Point Gauss-Seidel over the rank's rows of f from b (n x 3): each row from the newest values, plus `far`.
std::vector<double> PointGaussSeidel(const SparseSystem &s, const FormFactorRows &f, const std::vector<double> &b,
                                     const std::vector<double> &far) {
  const size_t n = size_t(s.n);
  std::vector<double> newest(b), out(3 * f.RowCount());
  for (size_t r = 0; r < f.RowCount(); ++r) {
    const size_t i = size_t(f.rows[r]);
    for (int c = 0; c < 3; ++c) {
      double sum = far.empty() ? 0.0 : far[3 * r + size_t(c)];
      for (size_t j = 0; j < n; ++j) sum += s.dense[i * n + j] * newest[j + size_t(c) * n];
      out[3 * r + size_t(c)] = s.e[3 * i + size_t(c)] + s.rho[3 * i + size_t(c)] * sum;
    }
    for (int c = 0; c < 3; ++c) newest[i + size_t(c) * n] = out[3 * r + size_t(c)];
  }
  return out;
}

struct LocalRowData {
  std::vector<double> e, rho;
  LocalRowData(const SparseSystem &s, const FormFactorRows &f) {
    for (long long i : f.rows)
      for (int c = 0; c < 3; ++c) {
        e.push_back(s.e[3 * size_t(i) + size_t(c)]);
        rho.push_back(s.rho[3 * size_t(i) + size_t(c)]);
      }
  }
};

TEST(GpuCsrSolver, GroupedGaussSeidelSweepIsPointGaussSeidel) {
  const SparseSystem s(0.3);
  const size_t n = size_t(s.n);
  const std::vector<double> b = SomeIterate(s.n);
  // One rank, and the last of three (cyclic rows: the group's rows are not consecutive patches).
  for (int ranks : {1, 3}) {
    FormFactorRows f = s.Csr(OwnedRows(s.n, ranks - 1, ranks, Distribution::kCyclic));
    AddFarLinks(s, f);
    const FlatTreeNodes nodes = FlattenTreeNodes(f.links);
    const FarFieldView view = ViewFarField(f.links, nodes, [](const auto &host) { return host.data(); });
    std::vector<double> far;
    FarFieldHost(view, (long long)f.RowCount(), b.data(), s.n, far);
    const std::vector<double> expected = PointGaussSeidel(s, f, b, far);
    // The residual of B^k over the rank's rows, from its definition.
    double residual = 0;
    for (size_t r = 0; r < f.RowCount(); ++r) {
      const size_t i = size_t(f.rows[r]);
      for (int c = 0; c < 3; ++c) {
        double t = far[3 * r + size_t(c)];
        for (size_t j = 0; j < n; ++j) t += s.dense[i * n + j] * b[j + size_t(c) * n];
        residual = std::max(residual, std::fabs(s.e[3 * i + size_t(c)] + s.rho[3 * i + size_t(c)] * t - b[i + size_t(c) * n]));
      }
    }
    residual /= s.MaxEmission();
    ASSERT_GT(residual, 0.01);
    const LocalRowData local(s, f);
    std::vector<double> x(b), packed(3 * f.RowCount(), -1.0);
    const CsrRowsView<double> rows{f.Columns(), f.f64.data()};
    const double got = CsrGaussSeidelSweepHost(rows, f.rows, LocalRows(n, f.rows), far, local.e.data(),
                                               local.rho.data(), x.data(), b.data(), s.n, s.MaxEmission(),
                                               packed.data());
    EXPECT_NEAR(got, residual, 1e-14) << "ranks " << ranks;
    ASSERT_GT(f.RowCount(), size_t(2 * kSubstitutionGroup));  // several groups, the last one partial
    for (size_t r = 0; r < f.RowCount(); ++r)
      for (int c = 0; c < 3; ++c) {
        const size_t i = size_t(f.rows[r]);
        EXPECT_NEAR(packed[3 * r + size_t(c)], expected[3 * r + size_t(c)], 1e-14) << "ranks " << ranks << ", row " << i;
        EXPECT_EQ(x[i + size_t(c) * n], packed[3 * r + size_t(c)]);  // the newest values, in place
      }
    for (size_t i = 0; i < n; ++i)  // other ranks' rows keep B^k
      if (ranks > 1 && CyclicOwner((long long)i, ranks) != ranks - 1)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(x[i + size_t(c) * n], b[i + size_t(c) * n]);
  }
}

TEST(GpuCsrSolver, GroupedGaussSeidelConvergesToTheDenseSolution) {
  const SparseSystem s;
  const size_t n = size_t(s.n);
  std::vector<double> exact[3];
  for (int c = 0; c < 3; ++c) exact[c] = test::DenseSolve(s.n, s.dense, s.rho, s.e, c);
  for (int ranks : {1, 3}) {  // Jacobi between ranks, as on the device
    std::vector<FormFactorRows> shares;
    for (int rank = 0; rank < ranks; ++rank) shares.push_back(s.Csr(OwnedRows(s.n, rank, ranks, Distribution::kCyclic)));
    std::vector<double> b(3 * n);
    for (size_t i = 0; i < n; ++i)
      for (size_t c = 0; c < 3; ++c) b[i + c * n] = s.e[3 * i + c];
    int iterations = 0;
    for (; iterations < 500; ++iterations) {
      std::vector<double> next(b);
      double residual = 0;
      for (const FormFactorRows &f : shares) {
        const LocalRowData local(s, f);
        std::vector<double> x(b), packed(3 * f.RowCount());
        const CsrRowsView<double> rows{f.Columns(), f.f64.data()};
        residual = std::max(residual, CsrGaussSeidelSweepHost(rows, f.rows, LocalRows(n, f.rows), {}, local.e.data(),
                                                              local.rho.data(), x.data(), b.data(), s.n,
                                                              s.MaxEmission(), packed.data()));
        for (size_t r = 0; r < f.RowCount(); ++r)
          for (size_t c = 0; c < 3; ++c) next[size_t(f.rows[r]) + c * n] = packed[3 * r + c];
      }
      if (residual < 1e-14) break;
      b = next;
    }
    ASSERT_LT(iterations, 500) << "ranks " << ranks;
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(b[i + size_t(c) * n], exact[c][i], 1e-12) << "ranks " << ranks << ", patch " << i;
  }
}

// ---- On the device ---------------------------------------------------------------------------------------

#define RAD_REQUIRE_DEVICE() \
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << DescribeCudaDevices()

SolverResult Solve(bool gpu, const LocalSystem &system, SolverMethod method, double tolerance) {
  SolverOptions options;
  options.method = method;
  options.tolerance = tolerance;
  PhaseTimers timers;
  return gpu ? SolveRadiosityGpu(MPI_COMM_WORLD, system, options, timers)
             : SolveRadiosity(MPI_COMM_WORLD, system, options, timers);
}

TEST(GpuCsrSolver, OnTheDeviceMatchesTheDenseSolution) {
  RAD_REQUIRE_DEVICE();
  const SparseSystem s;
  std::vector<double> exact[3];
  for (int c = 0; c < 3; ++c) exact[c] = test::DenseSolve(s.n, s.dense, s.rho, s.e, c);
  FormFactorRows f = s.Csr(AllRows(s.n));
  FormFactorRows narrow = f;
  narrow.precision = Precision::kFloat;
  narrow.f32.assign(f.f64.begin(), f.f64.end());
  narrow.f64.clear();
  for (const FormFactorRows *rows : {&f, &narrow})
    for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
      const SolverResult r = Solve(true, s.Local(*rows), method, 1e-13);
      ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
      EXPECT_EQ(r.sweeps, r.iterations + 1);
      const double tolerance = rows == &f ? 1e-11 : 1e-6;  // F rounded to float is another system
      for (size_t i = 0; i < size_t(s.n); ++i)
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(r.radiance[3 * i + size_t(c)], exact[c][i], tolerance) << "patch " << i;
    }
}

TEST(GpuCsrSolver, FarLinksOnTheDeviceAsOnTheCores) {
  RAD_REQUIRE_DEVICE();
  const SparseSystem s(0.3);
  FormFactorRows f = s.Csr(AllRows(s.n));
  AddFarLinks(s, f);
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult gpu = Solve(true, s.Local(f), method, 1e-13), cpu = Solve(false, s.Local(f), method, 1e-13);
    ASSERT_EQ(gpu.status, SolverStatus::kConverged) << gpu.message;
    ASSERT_EQ(cpu.status, SolverStatus::kConverged) << cpu.message;
    for (size_t k = 0; k < gpu.radiance.size(); ++k) EXPECT_NEAR(gpu.radiance[k], cpu.radiance[k], 1e-11) << k;
  }
}

TEST(GpuCsrSolver, OnTheDeviceReturnsTheIterateItMeasured) {
  RAD_REQUIRE_DEVICE();
  // Stopped early, Gauss-Seidel returns B^k, the iterate whose residual stopped it (not the newer values the
  // last sweep wrote): k sweeps of the host reference from B^0 = E give it.
  const SparseSystem s(0.3);
  FormFactorRows f = s.Csr(AllRows(s.n));
  AddFarLinks(s, f);
  const SolverResult r = Solve(true, s.Local(f), SolverMethod::kGaussSeidel, 1e-5);
  ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
  ASSERT_GT(r.iterations, 2);
  const size_t n = size_t(s.n);
  const FlatTreeNodes nodes = FlattenTreeNodes(f.links);
  const FarFieldView view = ViewFarField(f.links, nodes, [](const auto &host) { return host.data(); });
  const CsrRowsView<double> rows{f.Columns(), f.f64.data()};
  const LocalRowData local(s, f);
  std::vector<double> x(3 * n), b, far, packed(3 * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) x[i + c * n] = s.e[3 * i + c];
  for (int k = 0; k < r.iterations; ++k) {
    b = x;
    FarFieldHost(view, s.n, b.data(), s.n, far);
    CsrGaussSeidelSweepHost(rows, f.rows, LocalRows(n, f.rows), far, local.e.data(), local.rho.data(), x.data(),
                            b.data(), s.n, s.MaxEmission(), packed.data());
  }
  double moved = 0;  // what one more sweep would change: far above the agreement asked for
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(r.radiance[3 * i + c], x[i + c * n], 1e-12) << "patch " << i;
      moved = std::max(moved, std::fabs(packed[3 * i + c] - b[i + c * n]));
    }
  EXPECT_GT(moved, 1e-9);
}

TEST(GpuCsrSolver, WhiteFurnaceFromCsrRowsGivesTwoEverywhere) {
  RAD_REQUIRE_DEVICE();
  // Kd 0.5, Ke 1 on every wall of a closed cube: B = 1 / (1 - 0.5) = 2 on every patch and channel.
  test::SceneSystem s = test::FormFactorsOf("meshes/tests/furnace_cube.obj", 2);
  FormFactorRows csr;
  csr.n = s.F.n;
  csr.rows = s.F.rows;
  csr.storage = Storage::kCsr;
  csr.indptr.push_back(0);
  std::vector<int32_t> columns;
  for (size_t r = 0; r < s.F.RowCount(); ++r) {
    for (long long j = 0; j < s.F.n; ++j)
      if (s.f[r * size_t(s.F.n) + size_t(j)] != 0) {
        columns.push_back(int32_t(j));
        csr.f64.push_back(s.f[r * size_t(s.F.n) + size_t(j)]);
      }
    csr.indptr.push_back((long long)columns.size());
  }
  csr.AssignColumns(columns);
  LocalSystem local = s.local;
  local.F = &csr;
  for (SolverMethod method : {SolverMethod::kJacobi, SolverMethod::kGaussSeidel}) {
    const SolverResult r = Solve(true, local, method, 1e-10);
    ASSERT_EQ(r.status, SolverStatus::kConverged) << r.message;
    for (double v : r.radiance) EXPECT_NEAR(v, 2.0, 1e-6);
  }
}

}  // namespace
}  // namespace rad
