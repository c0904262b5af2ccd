"""What one run computes: the MNIST sources and the 1% split's data streams (`mnist_sources`,
`data`), what a knowledge base means for the model (`interpretation`: its binary predicates, the
batch's interpretation and crisp labels), the CNN and NTN heads (`model`), the loss of one step
with its logging and evaluation (`dfl_module.DFLModule`) and the optimizers (`optim`). Nothing
here imports Hydra or the job lifecycle (`dfl_bench.lifecycle`), which drives it: configs,
records, checkpoint files."""
