"""The learning signal of multi-digit MNIST addition at the untrained network."""

from __future__ import annotations

import math

import pytest

from dfl_bench.operators.numerics import EPS
from dfl_bench.theory.carry_gradients import measure, pairs

PRODUCT, SUM, MAX = {"name": "product"}, {"name": "bounded_sum"}, {"name": "maximum"}


def test_every_pair_of_the_experiment_is_measured_once():
    measured = pairs()
    assert {"product_sum", "product_max", "godel_max", "lukasiewicz_max"} <= set(measured)
    assert measured["product_max"] == (PRODUCT, MAX)
    assert len(set(map(str, measured.values()))) == len(measured)


@pytest.mark.parametrize("exists", [MAX, {"name": "generalized_mean", "p": 1.5}])
def test_in_log_space_the_product_keeps_its_gradient_where_as_a_value_it_sits_on_the_floor(exists):
    log_value, grad, _ = measure(PRODUCT, exists, 15, 4, seed=0)
    value, floored, _ = measure(PRODUCT, exists, 15, 4, seed=0, valuation="probability")
    assert log_value < math.log10(EPS) and value < math.log10(EPS)
    assert grad > 1e-2 and floored < 1e-12


def test_at_a_hundred_digits_the_value_underflows_and_the_log_keeps_the_signal():
    log_value, grad, _ = measure(PRODUCT, MAX, 100, 1, seed=0)
    value, floored, _ = measure(PRODUCT, MAX, 100, 1, seed=0, valuation="probability")
    assert -400 < log_value < -100 and value == float("-inf")  # 0 in float32
    assert grad > 1e-2 and floored == 0.0


def test_the_gradient_reaches_every_digit_under_the_product_one_of_a_sum_under_goedel():
    """Why Goedel + maximum learns no long sum though its norm is the product's: its gradient
    reaches one digit image of the best tuple, 1 of a sum's 2N; Lukasiewicz's reaches none."""
    digits, sums = 4, 8
    assert measure(PRODUCT, SUM, digits, sums, seed=0).reached == 1.0
    godel = measure({"name": "godel"}, MAX, digits, sums, seed=0)
    assert godel.norm > 1e-2 and godel.reached == pytest.approx(1 / (2 * digits))
    assert measure({"name": "lukasiewicz"}, MAX, digits, sums, seed=0).reached == 0.0
