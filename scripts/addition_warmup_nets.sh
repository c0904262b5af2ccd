#!/usr/bin/env bash
# make addition-warmup-nets: bn_wide with a learning-rate warmup against the shift collapse
# (conf/experiment/mnist_addition_warmup_nets.yaml): its validation row (seeds 0-2) first, then
# the declared rule decides (python -m campaign.addition_budget --warmup-adopted, on these
# records beside the committed ones it reads), and only an adopted warmup trains the final rows
# at 15 digits (seeds 0-4), then at 100 (seeds 0-4). Run from a frozen checkout; each job
# resumes from its checkpoint, a finished one is skipped.
#   scripts/addition_warmup_nets.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
warm=+experiment=mnist_addition_warmup_nets
train() {
    echo "[addition-warmup-nets] $(date -u +%FT%TZ) stage: $*"
    # shellcheck disable=SC2068  # a stage is its overrides
    "$python" -m dfl_bench -m "$warm" $@ records_dir="$records" logger=none progress_bar=false \
        threads=1 hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
        echo "[addition-warmup-nets] stage ended with exit $?: $* (its failed jobs are recorded)"
}
train row=bn_wide_warm_val seed=0,1,2
"$python" -m campaign.addition_budget --records-dir "$records" --warmup-adopted
case $? in
    0) ;;
    1) echo "[addition-warmup-nets] the rule does not adopt the warmup: no final rows"; exit 0 ;;
    *) echo "[addition-warmup-nets] the rule cannot decide (seeds missing): no final rows"; exit 1 ;;
esac
train row=bn_wide_warm_n15 seed=0,1,2,3,4
train row=bn_wide_warm_n100 seed=0,1,2,3,4
