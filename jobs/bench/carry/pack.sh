#!/usr/bin/env bash
# Packs this Debian build with the shared libraries and the Open MPI runtime it needs, relocatable, into
# .devcarry/rad.tar.gz, for a machine with a GPU but none of Debian's packages. CUDA's own libraries
# (cudart, cublas) are left to that machine's toolkit; glibc and libstdc++ too (the other machine's are newer).
set -euo pipefail
cd "$(dirname "$0")/../../.."; mkdir -p .devcarry
stage=$(mktemp -d)/rad
mkdir -p "$stage"/{bin,lib,ompi/bin,ompi/lib/x86_64-linux-gnu/openmpi/lib,ompi/share,pmix}
cp build/radiosity build/tests/radiosity_tests build/radiosity_bench_gpu_solver build/radiosity_bench_bvh "$stage/bin/"
cp /usr/bin/orterun /usr/bin/orted "$stage/ompi/bin/"; ln -s orterun "$stage/ompi/bin/mpirun"
cp -r /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 "$stage/ompi/lib/x86_64-linux-gnu/openmpi/lib/"
cp -r /usr/share/openmpi "$stage/ompi/share/"
cp -r /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix "$stage/pmix/plugins"
# plugins whose libraries are large and of no use on one node
for p in "$stage"/ompi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so "$stage"/pmix/plugins/*.so; do
  if ldd "$p" | grep -q "not found\|libfabric\|libucp\|libucs\|libpsm\|libibverbs\|librdmacm\|libgpfs"; then rm "$p"; fi
done
skip='linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|libresolv|libstdc\+\+|libgcc_s|libcudart|libcublas|libcuda\.so'
{ ldd "$stage"/bin/* "$stage"/ompi/bin/orterun "$stage"/ompi/bin/orted; find "$stage" -name '*.so' -exec ldd {} \; ; } 2>/dev/null \
  | awk '/=> \//{print $3}' | sort -u | grep -Ev "$skip" | while read -r l; do cp -L "$l" "$stage/lib/"; done
strip --strip-debug "$stage"/lib/*.so* 2>/dev/null || true
du -sh "$stage"
tar -C "$(dirname "$stage")" -czf .devcarry/rad.tar.gz rad
ls -la .devcarry/rad.tar.gz
