"""The MNIST parts of the tasks and one run of the paper's task: the MNIST sources and the 1%
split's data streams (`mnist_sources`, `mnist_data`, and for R runs in lockstep `stack_data`),
what a knowledge base means for the model (`interpretation`: its binary predicates, the batch's
interpretation and crisp labels), the CNN and NTN heads (`model`), the loss of one step, its
metrics, evaluation and summary (`dfl_run.DFLRun`, a `tasks.contract.TaskRun`) and the
optimizers (`optim`). Nothing here imports Hydra, Lightning's training module or the job
lifecycle (`dfl_bench.lifecycle`), which drive it: configs, records, checkpoint files."""
