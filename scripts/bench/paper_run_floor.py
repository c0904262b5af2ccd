"""The floor under a 70,000-iteration paper run at two threads: a bare PyTorch step of the
network with its NTN heads (`steps.bare_network`, no logic, no Lightning) against the CLI's
training iteration (`steps.iteration`) of the default configuration on `same`, both at two
threads, median of 60 after 15 warm-up, three rounds. A paper run cannot take less than 70,000
bare network steps.

    python scripts/bench/paper_run_floor.py > results/bench/floor/paper_run_floor.txt
"""

import statistics
import time

import torch

from campaign.bench import steps

torch.set_num_threads(2)
cpu = torch.device("cpu")
module = steps.build_module("same", steps.NEVER, cpu)
batches = steps.draw_batches(steps.load_data(64, cpu), 64, 8)
network = steps.bare_network(steps.build_module("same", steps.NEVER, cpu), batches[0])
iteration = steps.iteration(module, batches)


def median_ms(step, n: int = 60) -> float:
    for _ in range(15):
        step()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


print(f"torch {torch.__version__}, two threads, default configuration on same, batch 64 + 64")
for r in range(3):
    bare, it = median_ms(network), median_ms(iteration)
    print(
        f"round {r}: bare network step {bare:.2f} ms (70,000: {bare * 70 / 60:.1f} min), "
        f"CLI iteration {it:.2f} ms (70,000: {it * 70 / 60:.1f} min), ratio {it / bare:.2f}x"
    )
