"""The exit statuses of `python -m dfl_bench` (docs/training.md lists what each means),
importable before any library: the entry point refuses an invalid command line with them."""

EXIT_FAILED = 1  # a job failed (its record says why) or is already running
EXIT_INVALID = 2  # an invalid configuration: one line naming the valid choices, nothing trained
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): the step finished, a checkpoint saved
EXIT_TERMINATED = 143  # SIGTERM (`timeout`, SLURM): as Ctrl-C
