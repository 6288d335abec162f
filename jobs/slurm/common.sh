# shellcheck shell=bash
# Shared part of the batch scripts in jobs/slurm/ (sourced by them; not a job itself).
#
# Inside a Slurm job it reads the allocation from Slurm's variables; outside Slurm (the local mode of the
# scaling studies, or `bash jobs/slurm/formfactors.sbatch ...` on a laptop) the same script runs with mpirun
# and RAD_NTASKS ranks. Every knob is an environment variable, so `sbatch` passes them along unchanged:
#
#   RAD_ROOT          repository root (default: the folder above jobs/; sbatch runs a copy of the script, so
#                     submit from the repository root or set RAD_ROOT)
#   RAD_EXE           the radiosity executable (default: $RAD_ROOT/build/radiosity; with RAD_CONTAINER, its path
#                     in the image, default radiosity on the image's PATH)
#   RAD_CONTAINER     an Apptainer (or Singularity) image built from jobs/container/radiosity.def: every rank runs
#                     `$RAD_APPTAINER exec [--nv] --bind <results folder, repository, working folder> IMAGE
#                     radiosity ...` under the host's srun or mpirun (Apptainer's hybrid model: the host launches,
#                     the image's Open MPI talks to it through PMIx); --nv when the job has GPUs
#   RAD_APPTAINER     apptainer (default) or singularity
#   RAD_CONTAINER_BIND  more folders to bind into the image, comma-separated (input scenes elsewhere)
#   RAD_LAUNCHER      srun (default inside Slurm) or mpirun (default outside Slurm)
#   RAD_SRUN_MPI      srun's MPI plugin (default pmix: Open MPI 4 and 5 speak PMIx; pmi2 for MPICH builds)
#   RAD_SRUN_FLAGS    extra srun flags
#   RAD_MPIRUN_FLAGS  extra mpirun flags (default: --bind-to none, so a rank's threads may use its CPUs)
#   RAD_NTASKS        ranks (default: --ntasks inside Slurm, 1 outside)
#   RAD_THREADS       threads per rank (default: --cpus-per-task inside Slurm, else radiosity's own default)
#   RAD_JOB_NAME      the job's name (default: --job-name inside Slurm, radiosity-<subcommand> outside)
#   RAD_RESULTS_DIR   this job's results folder (default: $RAD_RESULTS_ROOT/<job name>-<job id>)
#   RAD_RESULTS_ROOT  where results folders go (default: results/ in the folder the job runs in, which for
#                     sbatch is the folder it was called from)
#   RAD_MODULES       modules to load first, e.g. "openmpi/4.1 hdf5/1.10-mpi embree/3" (needs `module`)
#   RAD_SITE_SETUP    a shell file sourced first, for anything else a site needs (proxies, conda, ...)
#   RAD_CHECKPOINT    1: `formfactors` and `run` save their rows in $RAD_RESULTS_DIR/checkpoint and continue from
#                     there when the job runs again (--checkpoint-dir, --restart); submitted with
#                     `sbatch --signal=USR1@300 --requeue ...`, a job that reaches its time limit writes a
#                     checkpoint on the signal, stops (exit 138) and requeues itself (same job id, same folder)
#
# Each job writes into its results folder the command's outputs, `timings.json` (per-phase min/avg/max over
# ranks, written by radiosity itself), `job.json` (allocation, launcher, command line, wall time, exit code)
# and `command.txt` (the exact command run).

set -euo pipefail

RAD_ROOT=${RAD_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}

# Site scripts and module systems (Lmod, Environment Modules) are not written for `set -eu`: relax it for them.
if [ -n "${RAD_SITE_SETUP:-}" ]; then
  set +eu
  # shellcheck disable=SC1090
  source "$RAD_SITE_SETUP"
  set -eu
fi
if [ -n "${RAD_MODULES:-}" ]; then
  set +eu
  if ! command -v module >/dev/null 2>&1; then
    for init in /etc/profile.d/lmod.sh /etc/profile.d/modules.sh; do
      # shellcheck disable=SC1090
      [ -f "$init" ] && source "$init" && break
    done
  fi
  # shellcheck disable=SC2086
  module load $RAD_MODULES
  status=$?
  set -eu
  if [ "$status" != 0 ]; then
    echo "$0: module load $RAD_MODULES failed" >&2
    exit 2
  fi
fi

if [ -n "${RAD_CONTAINER:-}" ]; then
  RAD_EXE=${RAD_EXE:-radiosity}
else
  RAD_EXE=${RAD_EXE:-$RAD_ROOT/build/radiosity}
fi
if [ -n "${SLURM_JOB_ID:-}" ]; then
  RAD_IN_SLURM=1
  RAD_LAUNCHER=${RAD_LAUNCHER:-srun}
  RAD_NTASKS=${RAD_NTASKS:-${SLURM_NTASKS:-${SLURM_NPROCS:-1}}}
  RAD_JOB_NAME=${RAD_JOB_NAME:-${SLURM_JOB_NAME:-radiosity}}
  RAD_JOB_ID=$SLURM_JOB_ID
  RAD_THREADS=${RAD_THREADS:-${SLURM_CPUS_PER_TASK:-}}
else
  RAD_IN_SLURM=0
  RAD_LAUNCHER=${RAD_LAUNCHER:-mpirun}
  RAD_NTASKS=${RAD_NTASKS:-1}
  RAD_JOB_NAME=${RAD_JOB_NAME:-radiosity-${RAD_SUBCOMMAND:-job}}
  RAD_JOB_ID=local-$(date +%Y%m%d-%H%M%S)-$$
  RAD_THREADS=${RAD_THREADS:-}
fi
RAD_RESULTS_DIR=${RAD_RESULTS_DIR:-${RAD_RESULTS_ROOT:-results}/$RAD_JOB_NAME-$RAD_JOB_ID}
mkdir -p "$RAD_RESULTS_DIR"

# JSON string with backslashes, quotes and control characters escaped.
RadJsonString() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}

# True when the argument list already holds the option (as `--opt value` or `--opt=value`).
RadHasOption() {
  local option=$1 a
  shift
  for a in "$@"; do
    [ "$a" = "$option" ] && return 0
    case "$a" in "$option="*) return 0 ;; esac
  done
  return 1
}

RAD_STARTED=""
RAD_COMMAND=()

# With RAD_CONTAINER, what runs radiosity inside the image (empty without): the folders a job reads and writes
# bound at the same paths.
RAD_IN_CONTAINER=()
if [ -n "${RAD_CONTAINER:-}" ]; then
  binds="$(cd "$RAD_RESULTS_DIR" && pwd),$RAD_ROOT,$PWD${RAD_CONTAINER_BIND:+,$RAD_CONTAINER_BIND}"
  RAD_IN_CONTAINER=("${RAD_APPTAINER:-apptainer}" exec --bind "$binds")
  if [ -n "${SLURM_GPUS_PER_TASK:-}${SLURM_GPUS:-}${SLURM_GPUS_ON_NODE:-}" ]; then RAD_IN_CONTAINER+=(--nv); fi
  RAD_IN_CONTAINER+=("$RAD_CONTAINER")
fi

# The radiosity executable with arguments, on this process alone (queries such as --help), in the image if any.
RadExe() {
  "${RAD_IN_CONTAINER[@]}" "$RAD_EXE" "$@"
}

# Runs the command line "$@" (the executable first) on RAD_NTASKS ranks and records it.
RadLaunch() {
  local launch=()
  if [ "$RAD_LAUNCHER" = srun ]; then
    # Slurm 22.05+ no longer passes --cpus-per-task from the job to srun: give it explicitly.
    launch=(srun "--mpi=${RAD_SRUN_MPI:-pmix}" "--ntasks=$RAD_NTASKS")
    [ -n "${SLURM_CPUS_PER_TASK:-}" ] && launch+=("--cpus-per-task=$SLURM_CPUS_PER_TASK")
    [ -n "${SLURM_GPUS_PER_TASK:-}" ] && launch+=("--gpus-per-task=$SLURM_GPUS_PER_TASK")
    # shellcheck disable=SC2206
    [ -n "${RAD_SRUN_FLAGS:-}" ] && launch+=($RAD_SRUN_FLAGS)
  else
    # shellcheck disable=SC2206
    launch=(mpirun -n "$RAD_NTASKS" ${RAD_MPIRUN_FLAGS:---bind-to none})
    if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  fi
  RAD_COMMAND=("${launch[@]}" "${RAD_IN_CONTAINER[@]}" "$@")
  printf '%q ' "${RAD_COMMAND[@]}" >"$RAD_RESULTS_DIR/command.txt"
  echo >>"$RAD_RESULTS_DIR/command.txt"
  echo "job $RAD_JOB_NAME ($RAD_JOB_ID): $RAD_NTASKS rank(s) x ${RAD_THREADS:-default} thread(s), results in $RAD_RESULTS_DIR"
  echo "+ ${RAD_COMMAND[*]}"
  RAD_STARTED=$(date +%s.%N)
  RAD_STARTED_ISO=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  "${RAD_COMMAND[@]}"
}

# Writes job.json; called on exit with the job's exit status.
RadWriteJobJson() {
  local rc=$1 finished wall="null" cmd="" a
  finished=$(date +%s.%N)
  if [ -n "$RAD_STARTED" ]; then
    wall=$(awk -v a="$RAD_STARTED" -v b="$finished" 'BEGIN { printf "%.3f", b - a }')
  fi
  for a in "${RAD_COMMAND[@]}"; do cmd+="${cmd:+, }$(RadJsonString "$a")"; done
  {
    echo "{"
    echo "  \"job_name\": $(RadJsonString "$RAD_JOB_NAME"),"
    echo "  \"job_id\": $(RadJsonString "$RAD_JOB_ID"),"
    echo "  \"slurm\": $([ "$RAD_IN_SLURM" = 1 ] && echo true || echo false),"
    echo "  \"subcommand\": $(RadJsonString "${RAD_SUBCOMMAND:-}"),"
    echo "  \"ranks\": $RAD_NTASKS,"
    echo "  \"nodes\": ${SLURM_JOB_NUM_NODES:-1},"
    echo "  \"node_list\": $(RadJsonString "${SLURM_JOB_NODELIST:-$(hostname)}"),"
    echo "  \"cpus_per_task\": $(RadJsonString "${SLURM_CPUS_PER_TASK:-}"),"
    echo "  \"gpus_per_task\": $(RadJsonString "${SLURM_GPUS_PER_TASK:-}"),"
    echo "  \"threads_per_rank\": $(RadJsonString "${RAD_THREADS:-}"),"
    echo "  \"launcher\": $(RadJsonString "$RAD_LAUNCHER"),"
    echo "  \"command\": [$cmd],"
    echo "  \"started\": $(RadJsonString "${RAD_STARTED_ISO:-}"),"
    echo "  \"wall_seconds\": $wall,"
    echo "  \"exit_code\": $rc"
    echo "}"
  } >"$RAD_RESULTS_DIR/job.json"
}
trap 'RadWriteJobJson $?' EXIT

case "$RAD_LAUNCHER" in
  srun | mpirun) ;;
  *) echo "$0: RAD_LAUNCHER must be srun or mpirun, not '$RAD_LAUNCHER'" >&2; exit 2 ;;
esac
if [ -n "${RAD_CONTAINER:-}" ]; then
  if [ ! -f "$RAD_CONTAINER" ]; then
    echo "$0: RAD_CONTAINER=$RAD_CONTAINER is not a file (build it: apptainer build radiosity.sif jobs/container/radiosity.def)" >&2
    exit 2
  fi
  if ! command -v "${RAD_APPTAINER:-apptainer}" >/dev/null 2>&1; then
    echo "$0: ${RAD_APPTAINER:-apptainer} not found (RAD_CONTAINER needs Apptainer or Singularity; set RAD_APPTAINER)" >&2
    exit 2
  fi
elif [ ! -x "$RAD_EXE" ]; then
  echo "$0: $RAD_EXE is not an executable: build first (bash jobs/setup.sh) or set RAD_EXE" >&2
  exit 2
fi

# RAD_CHECKPOINT=1: the checkpoint options, unless the caller gave a --checkpoint-dir.
RadCheckpointOptions() {
  if [ "${RAD_CHECKPOINT:-0}" = 1 ] && ! RadHasOption --checkpoint-dir "$@"; then
    echo "--checkpoint-dir $RAD_RESULTS_DIR/checkpoint --restart"
  fi
}

# RadLaunch, then with RAD_CHECKPOINT=1 inside Slurm: a run that stopped on SIGUSR1 or SIGTERM after writing its
# checkpoint (exit 138 or 143) puts the job back in the queue, to continue when it runs again.
RadLaunchRestartable() {
  local rc=0
  RadLaunch "$@" || rc=$?
  if [ "${RAD_CHECKPOINT:-0}" = 1 ] && [ "$RAD_IN_SLURM" = 1 ] && { [ "$rc" = 138 ] || [ "$rc" = 143 ]; } &&
    [ -f "$RAD_RESULTS_DIR/checkpoint/checkpoint.json" ]; then
    echo "job $RAD_JOB_ID stopped with a checkpoint in $RAD_RESULTS_DIR/checkpoint: requeueing it"
    scontrol requeue "$RAD_JOB_ID"
  fi
  return "$rc"
}

# Options every radiosity job gets unless the caller gave them: threads per rank from the allocation.
RadThreadOptions() {
  if [ -n "${RAD_THREADS:-}" ] && ! RadHasOption --threads "$@"; then
    echo "--threads $RAD_THREADS"
  fi
}
