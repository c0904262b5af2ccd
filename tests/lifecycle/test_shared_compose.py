"""sweep.shared_job_config: jobs that share a composition get what composing each alone gives."""

from __future__ import annotations

from hydra import compose

from dfl_bench.lifecycle import sweep
from dfl_bench.lifecycle.records import config_hash
from dfl_bench.lifecycle.train import resolved_config


def test_a_job_setting_other_keys_never_sees_another_jobs_values():
    """shared_job_config shares one composition per choice of groups: a job setting other keys
    than an earlier one gets what composing it alone gives, never the earlier job's values."""
    base = ["+experiment=same_symmetric", "profile=quick"]
    jobs = [
        ["row=product_S", "optimizer.lr=0.5"],
        ["row=product_S", "kb.scope=formula"],
        ["row=godel_R", "optimizer.lr=0.5"],
        ["row=product_S"],
    ]
    composed: dict = {}
    setting: sweep.Setting = {}
    with sweep.search_path():
        for job in jobs:
            shared = sweep.shared_job_config(base, job, composed, setting)
            alone = compose("config", overrides=[*base, *job])
            assert config_hash(resolved_config(shared)) == config_hash(resolved_config(alone)), job
