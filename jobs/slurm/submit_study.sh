# shellcheck shell=bash
# Submits a scaling study to Slurm: one job per run, then the collect job with --dependency=afterok on all of
# them. Sourced by strong_scaling.sh and weak_scaling.sh after jobs/scaling_common.sh parsed the options.

SubmitStudy() {
  command -v sbatch >/dev/null 2>&1 || { echo "$0: sbatch not found: is Slurm available here?" >&2; exit 2; }
  local ids=() i name p nodes args id
  for i in "${!runNames[@]}"; do
    name=${runNames[$i]}
    p=${runRanks[$i]}
    mkdir -p "$out/$name"
    args=(--parsable "--job-name=$name" "--ntasks=$p" "--cpus-per-task=$threads" "--time=$timeLimit"
          "--output=$out/$name/slurm-%j.out")
    [ -n "$gpusPerTask" ] && args+=("--gpus-per-task=$gpusPerTask")
    if [ -n "$tasksPerNode" ]; then
      nodes=$(((p + tasksPerNode - 1) / tasksPerNode))
      args+=("--nodes=$nodes" "--ntasks-per-node=$((p < tasksPerNode ? p : tasksPerNode))")
    fi
    # shellcheck disable=SC2206
    [ -n "$sbatchArgs" ] && args+=($sbatchArgs)
    id=$(RAD_RESULTS_DIR="$out/$name" RAD_ROOT="$RAD_REPO" RAD_LAUNCHER="$launcher" RAD_THREADS="$threads" \
         sbatch "${args[@]}" "$RAD_REPO/jobs/slurm/$command.sbatch" \
           --input "$scene" --subdiv "${runSubdivs[$i]}" "${extra[@]}")
    id=${id%%;*}
    ids+=("$id")
    echo "submitted $name: job $id, $p rank(s) x $threads thread(s), subdiv ${runSubdivs[$i]}"
  done
  # study.json before the collect job can start (it reads it), and again with the collect job's id.
  WriteStudyJson "${ids[@]}" ""
  local dependency
  dependency=afterok:$(IFS=:; echo "${ids[*]}")
  args=(--parsable "--job-name=$RAD_STUDY_KIND-collect" "--dependency=$dependency" --ntasks=1
        --cpus-per-task=1 --time=00:30:00 "--output=$out/collect-%j.out")
  # shellcheck disable=SC2206
  [ -n "$sbatchArgs" ] && args+=($sbatchArgs)
  id=$(RAD_ROOT="$RAD_REPO" sbatch "${args[@]}" "$RAD_REPO/jobs/slurm/collect.sbatch" "$out")
  id=${id%%;*}
  ids+=("$id")
  echo "submitted $RAD_STUDY_KIND-collect: job $id (after all of them succeeded)"
  WriteStudyJson "${ids[@]}"
  echo "study folder: $out (tables and plots will be in $out/analysis/)"
  [ "$wait" = 1 ] || return 0

  # Waiting: until none of the study's jobs is queued or running (finished jobs leave squeue).
  local deadline=$((SECONDS + waitTimeout)) queued
  while :; do
    queued=$(squeue -h -o %i -j "$(IFS=,; echo "${ids[*]}")" 2>/dev/null || true)
    [ -z "$queued" ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "$0: still running after $waitTimeout s: $queued" >&2
      exit 1
    fi
    sleep 1
  done
  local failed=0
  for i in "${!runNames[@]}"; do
    name=${runNames[$i]}
    if ! grep -q '"exit_code": 0' "$out/$name/job.json" 2>/dev/null; then
      echo "$name (job ${ids[$i]}) failed: see $out/$name/slurm-${ids[$i]}.out" >&2
      failed=1
    fi
  done
  if [ ! -f "$out/analysis/${RAD_STUDY_KIND}_scaling.md" ]; then
    echo "the collect job ($id) did not write $out/analysis/: see $out/collect-$id.out" >&2
    failed=1
  fi
  [ "$failed" = 0 ] && echo "study finished: $out/analysis/${RAD_STUDY_KIND}_scaling.md"
  return "$failed"
}
