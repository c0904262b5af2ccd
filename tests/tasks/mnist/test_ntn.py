"""The digit network and the NTN of Eq. NTN (Section 9.3)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dfl_bench.tasks.mnist.nets import MnistNet
from dfl_bench.tasks.mnist.ntn import NTN, DFLNet, MaterializedNTN


def test_mnist_net_shapes_and_embedding():
    net = MnistNet().eval()
    logits, emb = net(torch.randn(7, 1, 28, 28))
    assert logits.shape == (7, 10) and emb.shape == (7, 50)
    assert (emb >= 0).all()  # the ReLU activation of FC-50
    assert torch.allclose(logits, net.fc2(emb))  # no dropout in eval mode


def test_mnist_net_layer_sizes_match_the_paper():
    net = MnistNet()
    assert (net.conv1.out_channels, net.conv2.out_channels) == (10, 20)
    assert (net.fc1.in_features, net.fc1.out_features, net.fc2.out_features) == (320, 50, 10)


def pair_of_ntns(d: int, k: int, seed: int, bias: bool = False) -> tuple[NTN, MaterializedNTN]:
    torch.manual_seed(seed)
    fast = NTN(d, k, bias).double()
    slow = MaterializedNTN(d, k, bias).double()
    slow.load_state_dict(fast.state_dict())
    return fast, slow


@given(
    b=st.integers(1, 12),
    d=st.integers(1, 9),
    k=st.integers(1, 6),
    seed=st.integers(0, 99),
    bias=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_factorized_ntn_equals_materialized(b, d, k, seed, bias):
    fast, slow = pair_of_ntns(d, k, seed, bias)
    e1 = torch.randn(b, d, dtype=torch.float64, requires_grad=True)
    e2 = e1.detach().clone().requires_grad_()
    out_fast, out_slow = fast(e1), slow(e2)
    assert out_fast.shape == (b, b)
    assert torch.allclose(out_fast, out_slow, atol=1e-10)
    weights = torch.randn(b, b, dtype=torch.float64)
    (out_fast * weights).sum().backward()
    (out_slow * weights).sum().backward()
    assert torch.allclose(e1.grad, e2.grad, atol=1e-10)
    for (name, p), q in zip(fast.named_parameters(), slow.parameters(), strict=True):
        assert torch.allclose(p.grad, q.grad, atol=1e-10), name


def test_ntn_equals_eq_ntn_on_one_pair():
    fast, _ = pair_of_ntns(4, 3, 0)
    e = torch.randn(2, 4, dtype=torch.float64)
    e1, e2 = e[0], e[1]
    bilinear = torch.stack([e1 @ fast.W[:, i, :] @ e2 for i in range(3)])
    expected = fast.u @ torch.tanh(bilinear + fast.V @ torch.cat([e1, e2]) + fast.b)
    assert torch.allclose(fast(e)[0, 1], expected)


def test_ntn_with_bias_is_the_authors_samenet_head():
    """SameNet.get_same_logits: lastfc(tanh(fcrel([e1; e2]) + bilinear(e1, e2))), k = 10."""
    torch.manual_seed(0)
    ours = NTN(50, 10, bias=True).double()
    fcrel, bilinear, lastfc = nn.Linear(100, 10), nn.Bilinear(50, 50, 10), nn.Linear(10, 1)
    with torch.no_grad():
        fcrel.weight.copy_(ours.V)
        bilinear.weight.copy_(ours.W.transpose(0, 1))
        fcrel.bias.copy_(ours.b - bilinear.bias)  # the two biases fold into our b
        lastfc.weight.copy_(ours.u.unsqueeze(0))
        lastfc.bias.copy_(ours.c)
    fcrel, bilinear, lastfc = fcrel.double(), bilinear.double(), lastfc.double()
    e = torch.randn(6, 50, dtype=torch.float64)
    e1, e2 = e.repeat_interleave(6, dim=0), e.repeat(6, 1)  # pair (i, j) at row 6 i + j
    theirs = lastfc(torch.tanh(fcrel(torch.cat([e1, e2], dim=1)) + bilinear(e1, e2)))
    assert torch.allclose(ours(e), theirs.view(6, 6), atol=1e-12)


def test_ntn_without_bias_draws_what_it_drew_before_the_option():
    torch.manual_seed(3)
    plain = NTN(8, 4)
    torch.manual_seed(3)
    with_bias = NTN(8, 4, bias=True)
    assert list(plain.state_dict()) == ["W", "V", "b", "u"]  # old checkpoints still load
    for name, value in plain.state_dict().items():
        assert torch.equal(value, with_bias.state_dict()[name])
    assert with_bias.c.shape == () and abs(with_bias.c.item()) <= 4**-0.5
    e = torch.randn(3, 8)
    assert torch.allclose(with_bias(e), plain(e) + with_bias.c)


def test_ntn_float32_paper_size_matches_materialized():
    torch.manual_seed(0)
    fast, slow = NTN(), MaterializedNTN()
    slow.load_state_dict(fast.state_dict())
    e = torch.randn(16, 50)
    assert torch.allclose(fast(e), slow(e), atol=1e-5)


def test_ntn_leading_batch_dims():
    fast, _ = pair_of_ntns(5, 4, 1)
    e = torch.randn(3, 2, 6, 5, dtype=torch.float64)
    out = fast(e)
    assert out.shape == (3, 2, 6, 6)
    assert torch.allclose(out[2, 1], fast(e[2, 1]))


@pytest.mark.parametrize(("dim", "k"), [(50, 0), (50, 1025), (50, 10**20), (0, 50), (50, 2.0)])
def test_ntn_rejects_bad_sizes(dim, k):
    with pytest.raises(ValueError, match=r"must be an integer in \[1, 1024\]"):
        NTN(dim, k)


def test_dfl_net_has_one_head_per_binary_predicate():
    net = DFLNet(("same", "sum9"), ntn_k=7)
    logits, emb = net(torch.randn(5, 1, 28, 28))
    pairs = net.pair_logits(emb)
    assert sorted(pairs) == ["same", "sum9"] and pairs["same"].shape == (5, 5)
    assert not torch.equal(pairs["same"], pairs["sum9"])
    assert net.heads["same"].W.shape == (50, 7, 50)
    assert len(DFLNet(()).heads) == 0
    code = DFLNet(("same", "sum9"), ntn_k=10, ntn_bias=True)
    assert all(h.W.shape == (50, 10, 50) and h.c is not None for h in code.heads.values())


def test_stack_heads_with_the_codes_bias_equal_each_runs_own():
    from dfl_bench.tasks.mnist.stack_net import StackNet

    torch.manual_seed(0)
    nets = [DFLNet(("same", "sum9"), ntn_k=10, ntn_bias=True) for _ in range(2)]
    stack = StackNet(nets).eval()
    e = torch.randn(2, 5, 50)
    out = stack.pair_logits(e)
    for r, net in enumerate(nets):
        for name, logits in net.pair_logits(e[r]).items():
            assert torch.allclose(out[name][r], logits, atol=1e-6)
