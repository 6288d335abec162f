#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Weak scaling on this machine (laptop, workstation, CI): the study of jobs/slurm/weak_scaling.sh (level s:
# subdivision base + s on 4^s ranks), each run started with mpirun (oversubscribed when there are more ranks
# than cores) one after the other, then the tables and plots.
#
#   bash jobs/local/weak_scaling.sh --levels "0 1"                     # 46 and 184 patches on 1 and 4 ranks
#   bash jobs/local/weak_scaling.sh --base-subdiv 1 --levels "0 1 2" --out /tmp/weak
#
# --help lists the options; options after `--` go to every radiosity job. RAD_EXE picks the executable
# (default build/radiosity), RAD_MPIRUN_FLAGS replaces the mpirun flags (default --bind-to none
# --oversubscribe). Results: STUDY/weak-sS-rP/ per run, STUDY/analysis/ (analysis/README.md).
RAD_STUDY_KIND=weak
RAD_STUDY_MODE=local
# shellcheck source=../scaling_common.sh
source "$(dirname "$0")/../scaling_common.sh"
# shellcheck source=run_study.sh
source "$(dirname "$0")/run_study.sh"
ScalingParseArgs "$@"
RunStudyLocally
