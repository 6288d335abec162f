# shellcheck shell=bash
# Runs a scaling study on this machine: the same batch scripts as under Slurm (jobs/slurm/*.sbatch run
# without Slurm use mpirun), one run after the other, then the collect step. Sourced by strong_scaling.sh and
# weak_scaling.sh after jobs/scaling_common.sh parsed the options. Like Slurm's afterok, the collect step runs
# only when every run succeeded; the first failing run stops the study and shows the end of its log.

RunStudyLocally() {
  command -v mpirun >/dev/null 2>&1 || { echo "$0: mpirun not found" >&2; exit 2; }
  local i name p log ids=()
  for i in "${!runNames[@]}"; do ids+=(local); done
  WriteStudyJson "${ids[@]}" local
  for i in "${!runNames[@]}"; do
    name=${runNames[$i]}
    p=${runRanks[$i]}
    mkdir -p "$out/$name"
    log=$out/$name/job.out
    echo "running $name: $p rank(s) x $threads thread(s), subdiv ${runSubdivs[$i]}"
    # More ranks than cores is normal on a laptop or in CI: allow oversubscription unless told otherwise.
    if ! RAD_NTASKS="$p" RAD_JOB_NAME="$name" RAD_RESULTS_DIR="$out/$name" RAD_ROOT="$RAD_REPO" \
         RAD_LAUNCHER=mpirun RAD_THREADS="$threads" \
         RAD_MPIRUN_FLAGS="${RAD_MPIRUN_FLAGS:---bind-to none --oversubscribe}" \
         bash "$RAD_REPO/jobs/slurm/$command.sbatch" --input "$scene" --subdiv "${runSubdivs[$i]}" \
           "${extra[@]}" >"$log" 2>&1; then
      echo "$0: $name failed; the end of $log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
  done
  bash "$RAD_REPO/jobs/slurm/collect.sbatch" "$out" >"$out/collect.out" 2>&1 || {
    echo "$0: the collect step failed; the end of $out/collect.out:" >&2
    tail -n 20 "$out/collect.out" >&2
    exit 1
  }
  echo "study finished: $out/analysis/${RAD_STUDY_KIND}_scaling.md"
}
