#!/usr/bin/env bash
# make ceiling-search: each digit network's supervised ceiling on a recipe searched for it
# (conf/experiment/digit_ceiling_search.yaml), network by network so that a stop leaves the
# earliest complete: bn_deep, bn_wide, lenet; for each, its five candidates on the validation
# split (seeds 0-2), then the declared rule (python -m campaign.recipe_search --chosen NET), then
# the chosen candidate on every training image and the test set (stage=final, seeds 0-4). Run
# from a frozen checkout; each job resumes from its checkpoint, a finished one is skipped.
#   scripts/ceiling_search.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
search=+experiment=digit_ceiling_search
train() {
    echo "[ceiling-search] $(date -u +%FT%TZ) stage: $*"
    # shellcheck disable=SC2068  # a stage is its overrides
    "$python" -m dfl_bench -m "$search" $@ records_dir="$records" logger=none progress_bar=false \
        threads=1 hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
        echo "[ceiling-search] stage ended with exit $?: $* (its failed jobs are recorded)"
}
for net in bn_deep bn_wide lenet; do
    rows=$(printf "${net}_%s," const_1x cos_1x cos_2x_aug cos_4x_aug warm_cos_4x_aug)
    train "row=${rows%,}" seed=0,1,2
    if chosen=$("$python" -m campaign.recipe_search --records-dir "$records" \
        --experiment digit_ceiling_search --chosen "$net"); then
        train "row=$chosen" stage=final seed=0,1,2,3,4
    else
        echo "[ceiling-search] $net: the rule cannot choose (seeds missing): no final rows"
    fi
done
