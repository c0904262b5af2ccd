#!/usr/bin/env bash
# make addition-frontier-nets: the frontier's networks (conf/experiment/
# mnist_addition_frontier_nets.yaml and digit_ceiling_nets.yaml), trained stage by stage in the
# order their answers matter, so that a stop leaves the earliest complete: the exact pair at 15
# digits (seeds 0-4), at 4 digits (0-2), the networks' supervised ceilings (0-2), the two other
# existential aggregators at 15 digits (0-2), the exact pair at 100 digits (0-4). Run from a
# frozen checkout; each job resumes from its checkpoint, a finished one is skipped.
#   scripts/addition_frontier_nets.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
nets=+experiment=mnist_addition_frontier_nets
stages=(
    "$nets row=bn_wide_n15,lenet_n15 seed=0,1,2,3,4"
    "$nets row=bn_wide_n4,lenet_n4 seed=0,1,2"
    "+experiment=digit_ceiling_nets seed=0,1,2"
    "$nets row=bn_wide_max_n15,bn_wide_gm_n15 seed=0,1,2"
    "$nets row=bn_wide_n100,lenet_n100 seed=0,1,2,3,4"
)
for stage in "${stages[@]}"; do
    echo "[addition-frontier-nets] $(date -u +%FT%TZ) stage: $stage"
    # shellcheck disable=SC2086  # a stage is its overrides, split on spaces
    "$python" -m dfl_bench -m $stage records_dir="$records" logger=none progress_bar=false \
        threads=1 hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
        echo "[addition-frontier-nets] stage ended with exit $?: $stage (its failed jobs are recorded)"
done
