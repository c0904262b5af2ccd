"""The job lifecycle: what happens to one Hydra job around the computation of its task's runs
(`dfl_bench.tasks`). The entry point (`train`: config resolution, exit codes) checks the config
(`guards`; a sweep checks all its jobs first: `sweep`), then `job` lives the lifecycle: one process
per job (`lock`), skip or reuse a finished record, train with the Trainer and its callbacks
(`trainer`, `console`), resume from and write checkpoints (`checkpoint`), log (`loggers`) and write
the run record (`records`, with each value's source from `provenance`); a sweep's jobs that can
share one model train as stacks through the same lifecycle (`stack_sweep`,
`hydra/launcher=stack`)."""
