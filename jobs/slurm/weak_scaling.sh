#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Weak scaling on Slurm, as in the reference paper: level s runs subdivision (base + s) on 4^s ranks, so the
# patches (rows) per rank stay the same: each subdivision multiplies the patches by 4 (the paper's scene,
# meshes/cornell_sphere.obj, has 46 polygons). One job per level (default levels 0 1 2: 1, 4 and 16 ranks), then a
# collect job (--dependency=afterok on all of them) that writes the tables and plots.
#
#   bash jobs/slurm/weak_scaling.sh                                    # 46, 184, 736 patches on 1, 4, 16 ranks
#   bash jobs/slurm/weak_scaling.sh --base-subdiv 2 --levels "0 1 2 3" --tasks-per-node 16 \
#        --sbatch "--partition=compute" --time 02:00:00                # 736 ... 47104 patches on 1 ... 64 ranks
#   bash jobs/slurm/weak_scaling.sh --gpus-per-task 1                  # one GPU per rank
#
# Run it from the repository root after building (bash jobs/setup.sh); --help lists the options; options after
# `--` go to every radiosity job. The work per rank still grows 4-fold per level (each row has 4 times more
# columns); the analysis reports efficiency normalised by that work (analysis/README.md). Each run's results go
# to STUDY/weak-sS-rP/, the analysis to STUDY/analysis/. jobs/local/weak_scaling.sh runs it with mpirun.
RAD_STUDY_KIND=weak
RAD_STUDY_MODE=slurm
# shellcheck source=../scaling_common.sh
source "$(dirname "$0")/../scaling_common.sh"
# shellcheck source=submit_study.sh
source "$(dirname "$0")/submit_study.sh"
ScalingParseArgs "$@"
SubmitStudy
