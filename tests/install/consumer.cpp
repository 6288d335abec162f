// Uses the installed library as another project would: loads a scene with its reader and takes a value of the
// net-radiation method from its headers. Prints what it found; exits non-zero if it is wrong.
#include <cmath>
#include <cstdio>

#include "scene/scene.h"
#include "solver/gray_body.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENE.obj\n");
    return 2;
  }
  const rad::Scene scene = rad::LoadScene(argv[1], rad::SceneLoadOptions{});
  rad::SurfaceProperties hot;
  hot.emissivity = 0.5;
  hot.temperature = 1000;
  double e = 0, rho = 0;
  rad::NetRadiationSystem(hot, e, rho);
  std::printf("faces %zu, materials %zu, E %.6f W/m^2, rho %.2f\n", scene.faces.size(), scene.materials.size(), e,
              rho);
  return scene.faces.empty() || std::fabs(e - 0.5 * rad::kStefanBoltzmann * 1e12) > 1e-6 ? 1 : 0;
}
