#!/usr/bin/env bash
# make addition-finals: the final rows of MNIST addition (conf/experiment/
# mnist_addition_final_nets.yaml), each on its network's chosen recipe, on the test set: first a
# check that every row's recipe is the one its search's rule chose over the checkout's committed
# records (python -m campaign.final_nets --check; $FINALS_CHOICE_RECORDS names other records),
# then the rows grouped by their declared seeds (--stages: the targeted rows, 5 seeds, first).
# Run from a frozen checkout; each job resumes from its checkpoint, a finished one is skipped.
#   scripts/final_nets.sh PYTHON RECORDS_DIR JOBS
set -u
python=$1 records=$2 jobs=$3
choice=${FINALS_CHOICE_RECORDS:-results/records}
"$python" -m campaign.final_nets --check --records-dir "$choice" || {
    echo "[addition-finals] a row's recipe is not its search's choice: nothing trained"
    exit 2
}
stages=$("$python" -m campaign.final_nets --stages) || {
    echo "[addition-finals] cannot read the rows to train (python -m campaign.final_nets --stages)"
    exit 2
}
while read -r rows seeds; do
    echo "[addition-finals] $(date -u +%FT%TZ) stage: row=$rows seed=$seeds"
    "$python" -m dfl_bench -m +experiment=mnist_addition_final_nets "row=$rows" "seed=$seeds" \
        records_dir="$records" logger=none progress_bar=false threads=1 \
        hydra/launcher=parallel hydra.launcher.n_jobs="$jobs" < /dev/null ||
        echo "[addition-finals] stage ended with exit $? (its failed jobs are recorded)"
done <<< "$stages"
