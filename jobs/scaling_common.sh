# shellcheck shell=bash
# Shared part of the scaling-study scripts (jobs/slurm/{strong,weak}_scaling.sh and jobs/local/...): options,
# the list of runs, study.json. Sourced; not a script of its own.
#
# A study folder holds one results folder per run, named after its job (strong-r4, weak-s1-r4), study.json
# (what was asked for, the job ids) and, once the collect step ran, analysis/ (tables and plots).

set -euo pipefail

ScalingUsage() {
  cat <<EOF
usage: $0 [options] [-- options passed to every radiosity job]

  --scene FILE        scene (default: meshes/cornell_sphere.obj, the reference paper's 46 polygons)
  --command CMD       formfactors (default: the paper's study) or run (form factors + solve + image)
  --out DIR           study folder (default: results/$RAD_STUDY_KIND-<date>-<time>)
  --threads T         threads per rank, --cpus-per-task under Slurm (default 1)
EOF
  if [ "$RAD_STUDY_KIND" = strong ]; then
    cat <<EOF
  --subdiv K          subdivision level of every run (default 3: 2944 patches on the default scene)
  --ranks "P1 P2 ..." rank counts, one run each (default "1 2 4 8 16")
EOF
  else
    cat <<EOF
  --levels "S1 S2 ..." levels s, one run each with subdivision (base + s) on 4^s ranks (default "0 1 2")
  --base-subdiv B     subdivision of level 0 (default 0)
EOF
  fi
  if [ "$RAD_STUDY_MODE" = slurm ]; then
    cat <<EOF
  --time T            time limit of each job (default 01:00:00)
  --gpus-per-task G   GPUs per rank (default: none requested)
  --tasks-per-node N  ranks per node (default: let Slurm pack them)
  --sbatch "ARGS"     more sbatch options for every job, e.g. "--partition=short --account=proj"
  --launcher L        srun (default) or mpirun inside each job
  --wait              wait until the study ends; exit 1 unless every job and the collect job succeeded
  --wait-timeout S    give up waiting after S seconds (default 86400)
EOF
  fi
}

# Defaults, then the command line.
RAD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
scene=meshes/cornell_sphere.obj
command=formfactors
out=""
threads=1
subdiv=3
ranksList="1 2 4 8 16"
levels="0 1 2"
baseSubdiv=0
timeLimit=01:00:00
gpusPerTask=""
tasksPerNode=""
sbatchArgs=""
launcher=srun
wait=0
waitTimeout=86400
extra=()

ScalingParseArgs() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --scene) scene=$2; shift 2 ;;
      --command) command=$2; shift 2 ;;
      --out) out=$2; shift 2 ;;
      --threads) threads=$2; shift 2 ;;
      --subdiv) subdiv=$2; shift 2 ;;
      --ranks) ranksList=$2; shift 2 ;;
      --levels) levels=$2; shift 2 ;;
      --base-subdiv) baseSubdiv=$2; shift 2 ;;
      --time) timeLimit=$2; shift 2 ;;
      --gpus-per-task) gpusPerTask=$2; shift 2 ;;
      --tasks-per-node) tasksPerNode=$2; shift 2 ;;
      --sbatch) sbatchArgs=$2; shift 2 ;;
      --launcher) launcher=$2; shift 2 ;;
      --wait) wait=1; shift ;;
      --wait-timeout) waitTimeout=$2; shift 2 ;;
      -h | --help) ScalingUsage; exit 0 ;;
      --) shift; extra=("$@"); break ;;
      *) echo "$0: unknown option '$1' (--help lists them; radiosity's own options go after --)" >&2; exit 2 ;;
    esac
  done
  case "$command" in
    formfactors | run) ;;
    *) echo "$0: --command must be formfactors or run, not '$command'" >&2; exit 2 ;;
  esac
  case "$launcher" in
    srun | mpirun) ;;
    *) echo "$0: --launcher must be srun or mpirun, not '$launcher'" >&2; exit 2 ;;
  esac
  local n
  for n in $ranksList $levels $baseSubdiv $subdiv $threads ${gpusPerTask:-0} ${tasksPerNode:-1}; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "$0: '$n' is not a whole number" >&2; exit 2; }
  done
  [ -f "$scene" ] || { echo "$0: $scene: no such scene file (--scene)" >&2; exit 2; }
  out=${out:-results/$RAD_STUDY_KIND-$(date +%Y%m%d-%H%M%S)}
  if [ -e "$out/study.json" ] || [ -e "$out/analysis" ]; then
    echo "$0: $out already holds a study (study.json): choose another --out" >&2
    exit 2
  fi
  mkdir -p "$out"
  out=$(cd "$out" && pwd)

  # The runs: names, rank counts and subdivision levels.
  runNames=()
  runRanks=()
  runSubdivs=()
  local p s
  if [ "$RAD_STUDY_KIND" = strong ]; then
    for p in $ranksList; do
      [ "$p" -ge 1 ] || { echo "$0: rank counts must be at least 1" >&2; exit 2; }
      runNames+=("strong-r$p"); runRanks+=("$p"); runSubdivs+=("$subdiv")
    done
  else
    for s in $levels; do
      p=$((1 << (2 * s)))
      runNames+=("weak-s$s-r$p"); runRanks+=("$p"); runSubdivs+=("$((baseSubdiv + s))")
    done
  fi
  [ ${#runNames[@]} -gt 0 ] || { echo "$0: no runs (empty --ranks or --levels)" >&2; exit 2; }
}

JsonString() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# study.json: what the study is, so that the analysis knows strong from weak and can check it found every run.
# Arguments: the job ids of the runs (or "local"), then the collect job's id.
WriteStudyJson() {
  local ids=("$@") i runs="" extraJson="" a
  local collectId=${ids[${#ids[@]} - 1]}
  for i in "${!runNames[@]}"; do
    runs+="${runs:+,
}    {\"name\": $(JsonString "${runNames[$i]}"), \"ranks\": ${runRanks[$i]}, \"subdiv\": ${runSubdivs[$i]}, \"job_id\": $(JsonString "${ids[$i]}")}"
  done
  for a in "${extra[@]}"; do extraJson+="${extraJson:+, }$(JsonString "$a")"; done
  cat >"$out/study.json.tmp" <<EOF
{
  "kind": "$RAD_STUDY_KIND",
  "mode": "$RAD_STUDY_MODE",
  "scene": $(JsonString "$scene"),
  "command": "$command",
  "threads_per_rank": $threads,
  "extra_args": [$extraJson],
  "created": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
  "collect_job_id": $(JsonString "$collectId"),
  "runs": [
$runs
  ]
}
EOF
  mv "$out/study.json.tmp" "$out/study.json"
}
