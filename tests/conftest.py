"""Shared test setup."""

from __future__ import annotations

import os

import pytest
import torch
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples (a red CI is then reproducible);
# local runs explore new examples each time and keep the failures in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """Tiny models: one torch thread is faster, and immune to oversubscribed cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """In-process runs set torch's thread count; restore it for the other tests."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)
