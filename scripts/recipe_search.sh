#!/usr/bin/env bash
# make recipe-search: the sum-trained recipe at 15 digits per network (conf/experiment/
# mnist_addition_recipe_nets.yaml: its candidates on the held-out training sums, seeds 0-2),
# network by network so that a stop leaves the earliest complete (bn_deep, bn_wide, lenet), then
# the declared rule's choices (python -m campaign.recipe_search --chosen NET). Run from a frozen
# checkout; each job resumes from its checkpoint, a finished one is skipped.
#   scripts/recipe_search.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
for net in bn_deep bn_wide lenet; do
    rows=$(printf "${net}_%s," cos_1x warm_cos_2x warm_cos_4x_aug warm_cos_6x_aug)
    [ "$net" = bn_deep ] && rows="bn_deep_const_1x,$rows"
    echo "[recipe-search] $(date -u +%FT%TZ) stage: $net"
    "$python" -m dfl_bench -m +experiment=mnist_addition_recipe_nets "row=${rows%,}" seed=0,1,2 \
        records_dir="$records" logger=none progress_bar=false threads=1 \
        hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
        echo "[recipe-search] $net ended with exit $? (its failed jobs are recorded)"
    "$python" -m campaign.recipe_search --records-dir "$records" \
        --experiment mnist_addition_recipe_nets --chosen "$net" ||
        echo "[recipe-search] $net: the rule cannot choose yet (seeds missing)"
done
