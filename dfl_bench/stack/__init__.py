"""Many runs per process, each module beside its single-run twin in `dfl_bench.run`: R `DFLNet`s
stacked as one network for a GPU (`net`), R data streams (`data`) and R `DFLModule`s trained as
one LightningModule (`module`). A sweep's jobs are grouped into stacks by
`dfl_bench.lifecycle.stack_sweep`. Each run keeps its own seed, data order, dropout and record."""
