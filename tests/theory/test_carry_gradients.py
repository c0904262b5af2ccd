"""The learning signal of multi-digit MNIST addition at the untrained network."""

from __future__ import annotations

from dfl_bench.operators.numerics import EPS
from dfl_bench.theory.carry_gradients import measure, rows

PRODUCT, SUM, MAX = {"name": "product"}, {"name": "bounded_sum"}, {"name": "maximum"}


def test_every_row_of_the_experiment_is_measured_with_its_one_digit_pair():
    measured = rows()
    assert {"product_sum_n4", "product_max_n15", "product_sum_n1", "godel_max_n1"} <= set(measured)
    assert measured["product_max_n15"] == (PRODUCT, MAX, 15)


def test_the_exact_pair_keeps_its_gradient_where_the_maximum_falls_below_the_floor():
    value, grad = measure(PRODUCT, SUM, 15, 4, seed=0)
    low_value, low_grad = measure(PRODUCT, MAX, 15, 4, seed=0)
    assert value < EPS and low_value < value  # both tiny: only the floored log tells them apart
    assert grad > 1e-3 and low_grad < 1e-12
