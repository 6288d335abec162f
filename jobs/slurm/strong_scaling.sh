#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Strong scaling on Slurm: the same scene and subdivision on each rank count (default 1 2 4 8 16), one job per
# count, then a collect job (--dependency=afterok on all of them) that writes the tables and plots.
#
#   bash jobs/slurm/strong_scaling.sh                                  # cornell_sphere, subdiv 3 (2944 patches)
#   bash jobs/slurm/strong_scaling.sh --ranks "1 2 4 8 16 32 64" --tasks-per-node 16 --threads 4 \
#        --sbatch "--partition=compute --account=proj" --time 00:30:00 -- --precision float
#   bash jobs/slurm/strong_scaling.sh --gpus-per-task 1 --ranks "1 2 4 8"  # one GPU per rank
#   bash jobs/slurm/strong_scaling.sh --command run --wait -- --save-formfactors
#
# Run it from the repository root after building (bash jobs/setup.sh); --help lists the options; options after
# `--` go to every radiosity job. Each run's results go to STUDY/strong-rP/ (timings.json, the command's
# outputs, job.json, slurm-<id>.out), the analysis to STUDY/analysis/ (analysis/README.md).
# jobs/local/strong_scaling.sh runs the same study with mpirun on one machine.
RAD_STUDY_KIND=strong
RAD_STUDY_MODE=slurm
# shellcheck source=../scaling_common.sh
source "$(dirname "$0")/../scaling_common.sh"
# shellcheck source=submit_study.sh
source "$(dirname "$0")/submit_study.sh"
ScalingParseArgs "$@"
SubmitStudy
