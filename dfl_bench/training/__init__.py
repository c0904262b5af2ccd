"""Training: the one LightningModule (`module.RunsModule`) that trains R >= 1 runs of any task
(tasks/contract.py) as one, and the grouped network layout of the paper's runs for a GPU
(`stack_net.StackNet`). A sweep's jobs are grouped into stacks by
`dfl_bench.lifecycle.stack_sweep`; each run keeps its own seed, data order, dropout and record."""

from dfl_bench.training.module import RunsModule

__all__ = ["RunsModule"]
