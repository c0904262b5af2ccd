#!/usr/bin/env bash
# make minute-search: MNIST addition's one-minute budget chosen again on held-out training sums
# (conf/experiment/mnist_addition_minute_search.yaml): its candidates (seeds 0-2), the declared
# rule (python -m campaign.recipe_search --chosen paper), then the chosen one on every training
# sum and the test split, seeds 3-7 (no part in the choice). Run from a frozen checkout; each
# job resumes from its checkpoint, a finished one is skipped.
#   scripts/minute_search.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
minute=+experiment=mnist_addition_minute_search
train() {
    echo "[minute-search] $(date -u +%FT%TZ) stage: $*"
    # shellcheck disable=SC2068  # a stage is its overrides
    "$python" -m dfl_bench -m "$minute" $@ records_dir="$records" logger=none progress_bar=false \
        hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
        echo "[minute-search] stage ended with exit $?: $* (its failed jobs are recorded)"
}
train seed=0,1,2
if chosen=$("$python" -m campaign.recipe_search --records-dir "$records" \
    --experiment mnist_addition_minute_search --chosen paper); then
    train "row=$chosen" stage=final seed=3,4,5,6,7
else
    echo "[minute-search] the rule cannot choose (seeds missing): no final runs"
fi
