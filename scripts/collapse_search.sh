#!/usr/bin/env bash
# make collapse-search: candidates against bn_wide's shift collapse at 100 digits (conf/experiment/
# mnist_addition_collapse_nets.yaml), five seeds each on the held-out training sums, then the
# declared rule's choice (python -m campaign.collapse_search --chosen). Run from a frozen
# checkout; each job resumes from its checkpoint, a finished one is skipped.
#   scripts/collapse_search.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
echo "[collapse-search] $(date -u +%FT%TZ) candidates"
"$python" -m dfl_bench -m +experiment=mnist_addition_collapse_nets seed=0,1,2,3,4 \
    records_dir="$records" logger=none progress_bar=false threads=1 \
    hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" ||
    echo "[collapse-search] ended with exit $? (its failed jobs are recorded)"
"$python" -m campaign.collapse_search --records-dir "$records" --chosen ||
    echo "[collapse-search] the rule cannot choose yet (seeds missing)"
