"""Many runs per process, each module beside its single-run twin in `dfl_bench.run`: R `DFLNet`s
stacked as one network (`net`), R data streams (`data`), R `DFLModule`s trained as one
LightningModule (`module`), and a sweep's jobs grouped into stacks that go through the same job
lifecycle as a single run (`runs`; launcher: hydra_plugins/dfl_bench_stacked,
`hydra/launcher=stacked`). Each run keeps its own seed, data order, dropout and record."""
