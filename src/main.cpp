// radiosity: MPI form factors, radiosity solve and rendering. One executable with subcommands.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <cstdio>
#include <unistd.h>
#include <exception>
#include <new>

#include "cli/commands.h"
#include "solver/krylov_solver.h"
#include "cli/options.h"
#include "io/hdf5_util.h"
#include "pipeline/backend.h"
#include "pipeline/execution.h"
#include "util/error.h"
#include "util/interrupts.h"
#include "util/memory_budget.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int rank = rad::WorldRank();
  rad::InstallInterruptHandlers(rank);
  int code = 0;
  {
    CLI::App app{"radiosity: form factors, radiosity and images for diffuse scenes, on MPI ranks"};
    app.require_subcommand(1);
    bool version = false;
    app.add_flag("--version", version, "Print the version and the backends compiled in, then exit");
    const std::vector<std::pair<std::string, rad::CommandRunner>> commands = {
        {"formfactors", rad::AddFormFactorsCommand(app)},
        {"solve", rad::AddSolveCommand(app)},
        {"thermal", rad::AddThermalCommand(app)},
        {"render", rad::AddRenderCommand(app)},
        {"run", rad::AddRunCommand(app)},
        {"info", rad::AddInfoCommand(app)},
        {"compare", rad::AddCompareCommand(app)},
        {"export", rad::AddExportCommand(app)},
        {"pathtrace", rad::AddPathTraceCommand(app)},
        {"vpl", rad::AddVplCommand(app)},
        {"validate", rad::AddValidateCommand(app)},
    };
    rad::RejectNonFiniteNumbers(app);
    // --version works without a subcommand.
    app.preparse_callback([&](size_t) {
      for (int k = 1; k < argc; ++k)
        if (std::string(argv[k]) == "--version") app.require_subcommand(0);
    });
    try {
      app.parse(argc, argv);
      if (version) {
        if (rank == 0) {
          const std::string krylov = rad::KrylovSolversVersion();
          std::printf("radiosity %s\n%s\nsolvers: jacobi, gauss-seidel%s\n", RAD_VERSION,
                      rad::BackendsDescription().c_str(), krylov.empty() ? "" : (", gmres (" + krylov + ")").c_str());
        }
      } else {
        for (const auto &[name, run] : commands)
          if (app.get_subcommand(name)->parsed()) code = run();
      }
    } catch (const CLI::ParseError &e) {
      if (rank == 0) {
        const int c = app.exit(e);  // prints help, or the error with a usage hint
        code = (c == 0) ? 0 : rad::kExitInputError;
      } else {
        code = (e.get_exit_code() == 0) ? 0 : rad::kExitInputError;
      }
    } catch (const rad::InputError &e) {
      if (rank == 0) std::fprintf(stderr, "radiosity: error: %s\n", e.what());
      code = rad::kExitInputError;
      if (rad::H5LibraryUnusable()) {  // a file HDF5 cannot close: MPI_Finalize would crash in HDF5's clean-up
        std::fflush(nullptr);
        _exit(code);
      }
    } catch (const std::bad_alloc &) {
      // An allocation that failed on this rank alone: the others may be waiting in a collective, so no
      // agreement is possible; one line, then every rank stops with exit code 2.
      rad::AbortOutOfMemory();
    } catch (const std::exception &e) {
      RAD_FATAL(std::string("unexpected exception: ") + e.what());
    }
  }
  rad::FinalizeKrylovSolvers();  // PETSc's, if a Krylov solve started it (its -log_view report)
  MPI_Finalize();
  return code;
}
