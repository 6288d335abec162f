// The backend dispatch: where each stage's work runs, the CPU (Embree and the rank's cores) or the rank's
// GPU (cuda/). The only code outside cuda/ that calls the GPU: a stage names a Backend and calls one of the
// functions below. Whether CUDA is compiled in is decided by CMake alone: a build without it links
// cuda/without_cuda.cpp, whose GPU has no device, so ResolveBackend never gives Backend::kGpu there and no
// source file needs to know (no #ifdef).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "formfactor/cpu_form_factors.h"
#include "formfactor/geometry.h"
#include "formfactor/pair_exchange.h"
#include "render/camera.h"
#include "render/image.h"
#include "render/radiosity_renderer.h"
#include "scene/patch.h"
#include "scene/scene.h"
#include "solver/radiosity_solver.h"
#include "util/timers.h"

namespace rad {

enum class Backend { kCpu, kGpu };

// Collective. `requested` is auto, cpu or gpu: the choice is made once, the same on every rank. `gpu` without a
// usable device on some rank is the user's mistake (InputError on every rank); `auto` takes the GPU only when
// every rank has one. Prints nothing.
Backend ResolveBackend(MPI_Comm comm, const std::string &requested);

// Rank 0, unless quiet: the one-line notice when `auto` fell back to the CPU.
void AnnounceBackend(MPI_Comm comm, const std::string &requested, Backend backend, bool quiet);

const char *BackendName(Backend backend);

// Text of the backends compiled in and devices found, for --version and info.
std::string BackendsDescription();

// Collective with the GPU backend: makes the node-local rank's device current (once per rank; later calls in
// cuda/ find it chosen). Nothing with the CPU backend.
void SelectDevice(MPI_Comm comm, Backend backend);

// Host bytes the GPU backend adds when it computes float32 rows (its float64 staging area); 0 otherwise.
double FormFactorStagingBytes(Backend backend, bool floatRows);

// This rank's `rows` of F into `out` (rows.size() x N, row-major): builds `geometry` from the scene and the
// backend's ray structure (timed together as "acceleration"), then computes the rows (cpu_form_factors.h, or
// cuda/gpu_form_factors.h). The CPU exchanges pair results with the rows' `owners`. A rank that cannot allocate
// its rows on the GPU makes every rank stop with one InputError. `rounds` (checkpoints) are the CPU's only.
void ComputeFormFactorRows(Backend backend, const Scene &scene, const Meshing &meshing, FormFactorGeometry &geometry,
                           const std::vector<long long> &rows, const FormFactorOptions &options,
                           const RowOwners &owners, std::vector<double> &out, PhaseTimers &timers,
                           FormFactorCounters &counters, bool showProgress, const RowRounds *rounds = nullptr);
void ComputeFormFactorRows(Backend backend, const Scene &scene, const Meshing &meshing, FormFactorGeometry &geometry,
                           const std::vector<long long> &rows, const FormFactorOptions &options,
                           const RowOwners &owners, std::vector<float> &out, PhaseTimers &timers,
                           FormFactorCounters &counters, bool showProgress, const RowRounds *rounds = nullptr);

// SolveRadiosity (solver/radiosity_solver.h) on the backend: the same iteration and sum order on both.
SolverResult SolveRadiosityOn(Backend backend, MPI_Comm comm, const LocalSystem &system, const SolverOptions &options,
                              PhaseTimers &timers);

// RenderRadiosity (render/radiosity_renderer.h) on the backend.
Image RenderRadiosityOn(Backend backend, MPI_Comm comm, const std::vector<Patch> &patches,
                        const std::vector<double> &radiance, const Camera &camera, const RenderOptions &options);

}  // namespace rad
