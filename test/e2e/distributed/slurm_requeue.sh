#!/bin/bash
# slurm_requeue.sh JOB_SCRIPT CHECKPOINT_DIR [ARGS...]: submits JOB_SCRIPT
# with ARGS, requeues the job (`scontrol requeue`, as after a node failure)
# once a checkpoint exists in CHECKPOINT_DIR, lets the requeued job start at
# once (Slurm holds it for two minutes otherwise), waits until it completes
# and prints its output file (lmc-train-JOB.out, removed first).
set -euo pipefail
script=$1 checkpoints=$2
shift 2
rm -f lmc-train-*.out
job=$(sbatch --parsable "$script" "$@")
until compgen -G "$checkpoints/step_*.safetensors" > /dev/null; do
  sleep 0.01
done
scontrol requeue "$job"
# The begin time can be changed once the job waits again.
until scontrol show job "$job" | grep -q 'JobState=PENDING.*Reason=BeginTime'; do
  sleep 0.1
done
scontrol update JobId="$job" StartTime=now
state=
for _ in $(seq 600); do
  state=$(scontrol show job "$job" | grep -o 'JobState=[A-Z_]*')
  case $state in
    JobState=COMPLETED) break ;;
    JobState=FAILED|JobState=CANCELLED|JobState=TIMEOUT|JobState=NODE_FAIL)
      cat lmc-train-"$job".out; echo "job $job: $state"; exit 1 ;;
  esac
  sleep 0.2
done
cat lmc-train-"$job".out
echo "job $job: $state"
[ "$state" = JobState=COMPLETED ]
