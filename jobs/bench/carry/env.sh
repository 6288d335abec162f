# Sourced on the GPU machine after rad.tar.gz (pack.sh) is unpacked into /tmp: wrappers that run the carried
# build and its Open MPI with their libraries, CUDA's libraries from that machine's toolkit. PMIx is told to keep
# quiet about its compression plugin (it would print to stderr, which the CLI tests read).
R=/tmp/rad
cudalib=$(dirname "$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcublasLt.so.13' -print 2>/dev/null | head -1)")
export RAD_LD="$R/lib:$cudalib"
export OPAL_PREFIX=$R/ompi PMIX_MCA_mca_base_component_path=$R/pmix/plugins
export OMPI_MCA_mca_base_component_path=$R/ompi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p $R/wrap/tests
for b in radiosity radiosity_bench_gpu_solver radiosity_bench_bvh tests/radiosity_tests; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$RAD_LD" "$R/bin/$(basename $b)" > $R/wrap/$b; chmod +x $R/wrap/$b
done
for b in mpirun orted orterun; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$RAD_LD" "$R/ompi/bin/$b" > $R/ompi/wrapbin_$b; chmod +x $R/ompi/wrapbin_$b
done
mkdir -p $R/path; ln -sf $R/ompi/wrapbin_mpirun $R/path/mpirun
export PATH=$R/path:$PATH
export RAD_BUILD_DIR=$R/wrap
echo "cuda libraries from: $cudalib"
export PMIX_MCA_pcompress_base_silence_warning=1 PMIX_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_mca_base_component_show_load_errors=0
