#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Strong scaling on this machine (laptop, workstation, CI): the study of jobs/slurm/strong_scaling.sh, each run
# started with mpirun (oversubscribed when there are more ranks than cores) one after the other, then the tables
# and plots.
#
#   bash jobs/local/strong_scaling.sh --ranks "1 2 4"                  # cornell_sphere, subdiv 3
#   bash jobs/local/strong_scaling.sh --scene meshes/cornell_box.obj --subdiv 2 --ranks "1 2" --out /tmp/study
#   bash jobs/local/strong_scaling.sh --command run --ranks "1 2" -- --width 128 --height 128
#
# --help lists the options; options after `--` go to every radiosity job. RAD_EXE picks the executable
# (default build/radiosity), RAD_MPIRUN_FLAGS replaces the mpirun flags (default --bind-to none
# --oversubscribe). Results: STUDY/strong-rP/ per run, STUDY/analysis/ (analysis/README.md).
RAD_STUDY_KIND=strong
RAD_STUDY_MODE=local
# shellcheck source=../scaling_common.sh
source "$(dirname "$0")/../scaling_common.sh"
# shellcheck source=run_study.sh
source "$(dirname "$0")/run_study.sh"
ScalingParseArgs "$@"
RunStudyLocally
