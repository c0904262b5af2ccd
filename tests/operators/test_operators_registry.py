"""The operator registry and its Hydra option files conf/<kind>/<name>.yaml (the name contract)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from dfl_bench.operators import KINDS, OperatorSet, build, choices, spec

CONF = Path(__file__).resolve().parents[2] / "conf"
FAMILIES = {"hamacher", "frank", "dombi", "schweizer_sklar", "aczel_alsina"}  # families.py
CONTRACT = {
    "tnorm": {"godel", "product", "lukasiewicz", "drastic", "nilpotent_minimum", "yager"}
    | FAMILIES,
    "tconorm": {"godel", "product", "lukasiewicz", "drastic", "nilpotent_maximum", "yager"}
    | FAMILIES,
    "implication": {
        "kleene_dienes",
        "reichenbach",
        "lukasiewicz",
        "dubois_prade",
        "fodor",
        "yager_s",
        "godel",
        "goguen",
        "weber",
        "yager_r",
        "sigmoidal",
    }
    | {f"{family}_{kind}" for family in FAMILIES for kind in ("s", "r")},
    "forall": {
        "minimum",
        "product",
        "log_product",
        "lukasiewicz",
        "yager",
        "generalized_mean_error",
        "mae",
        "rmse",
        "nilpotent_minimum",
    }
    | FAMILIES,
    "exists": {
        "maximum",
        "probabilistic_sum",
        "bounded_sum",
        "yager",
        "generalized_mean",
        "nilpotent_maximum",
    }
    | FAMILIES,
}
# Option files whose values deliberately differ from the registry defaults.
YAML_OVERRIDES = {("forall", "log_product"): {"reduction": "mean"}}


def test_the_contracts_names_stay_registered() -> None:
    """Every name that configs, experiments and records spell stays registered (renaming or
    dropping one would orphan them); a name added to the registry needs no edit here (its
    option file is checked below, its laws by the law tests)."""
    assert set(KINDS) == set(CONTRACT)
    for kind, names in CONTRACT.items():
        assert names <= set(choices(kind)), sorted(names - set(choices(kind)))


def option_text(kind: str, name: str) -> str:
    """The option file an operator needs: its name and its parameters' defaults."""
    s = spec(kind, name)
    params = {} if s.name != name else {k: p.default for k, p in s.params.items()}
    return OmegaConf.to_yaml({"name": name, **params})


def test_a_missing_option_file_is_named_with_its_content() -> None:
    assert option_text("tnorm", "yager") == "name: yager\np: 2.0\neps: 0.0\n"
    assert option_text("forall", "mae") == "name: mae\n"


@pytest.mark.parametrize("kind", KINDS)
def test_one_option_file_per_operator(kind: str) -> None:
    """conf/<kind>/<name>.yaml exists for every name, holds `name` and the defaults, builds."""
    files = {p.stem for p in (CONF / kind).glob("*.yaml")}
    missing = {name: option_text(kind, name) for name in sorted(set(choices(kind)) - files)}
    assert not missing, "add " + "; add ".join(
        f"conf/{kind}/{n}.yaml:\n{t}" for n, t in missing.items()
    )
    assert files == set(choices(kind))
    for name in choices(kind):
        cfg = OmegaConf.to_container(OmegaConf.load(CONF / kind / f"{name}.yaml"))
        assert cfg.pop("name") == name
        s = spec(kind, name)
        if s.name != name:  # an alias fixes its parameters
            assert cfg == {}
        else:
            defaults = {k: p.default for k, p in s.params.items()}
            assert cfg == {**defaults, **YAML_OVERRIDES.get((kind, name), {})}
        assert callable(build(kind, name, **cfg))


def test_operator_set_from_option_files() -> None:
    """OperatorSet.from_config accepts the option files of every kind (a Hydra config)."""
    cfg = {
        "tnorm": OmegaConf.load(CONF / "tnorm" / "yager.yaml"),
        "tconorm": OmegaConf.load(CONF / "tconorm" / "product.yaml"),
        "implication": OmegaConf.load(CONF / "implication" / "sigmoidal.yaml"),
        "forall": OmegaConf.load(CONF / "forall" / "log_product.yaml"),
        "exists": OmegaConf.load(CONF / "exists" / "generalized_mean.yaml"),
    }
    ops = OperatorSet.from_config(cfg)
    x = torch.tensor([0.2, 0.9])
    assert ops.configs["forall"]["reduction"] == "mean"
    torch.testing.assert_close(ops.forall(x), x.log().mean())
    torch.testing.assert_close(ops.tconorm(x[0], x[1]), x[0] + x[1] - x[0] * x[1])
    with pytest.raises(ValueError, match="lacks"):
        OperatorSet.from_config({k: v for k, v in cfg.items() if k != "exists"})


@pytest.mark.parametrize(
    ("args", "params", "match"),
    [
        (("quantifier", "product"), {}, r"valid kinds: \['tnorm'"),
        (("tnorm", "no_such_tnorm"), {}, r"valid choices: \['aczel_alsina', 'dombi', 'drastic'"),
        (("tnorm", "frank"), {"p": 0.0}, r"p must be a number in \[1e-06, 1e\+30\]"),
        (("tnorm", "hamacher"), {"p": -0.5}, r"p must be a number in \[1e-06, 1e\+06\] or 0"),
        (("tnorm", "hamacher"), {"p": 1e-8}, r"p=1e-08 is out of range"),
        (("forall", "dombi"), {"p": -1.0}, r"out of range"),
        (("forall", "log_prod"), {}, r"valid choices: .*'log_product'"),
        (("tnorm", "product"), {"p": 2.0}, r"no parameter \['p'\]; valid parameters: none"),
        (("tnorm", "yager"), {"q": 2.0}, r"valid parameters: \['eps', 'p'\]"),
        (("tnorm", "yager"), {"p": 0.0}, r"p must be a number in \(0, inf\)"),
        (("tconorm", "yager"), {"p": -1.0}, r"out of range"),
        (("implication", "yager_r"), {"p": float("nan")}, r"out of range"),
        (("forall", "yager"), {"p": float("inf")}, r"out of range"),
        (("exists", "generalized_mean"), {"p": "two"}, r"not valid"),
        (("forall", "generalized_mean_error"), {"p": 0}, r"out of range"),
        (("forall", "log_product"), {"reduction": "max"}, r"one of \['sum', 'mean'\]"),
        (("forall", "mae"), {"p": 2.0}, r"fixes \['p'\]"),
        (("implication", "sigmoidal"), {"s": 0.0}, r"s must be a number in \(0, inf\)"),
        (
            ("implication", "sigmoidal"),
            {"base": "material"},
            r"base must be one of \['aczel_alsina_r'",
        ),
        (("implication", "sigmoidal"), {"base": "sigmoidal"}, r"base must be one of"),
        (("implication", "sigmoidal"), {"p": 2.0}, r"base 'reichenbach' has no parameter p"),
        (("implication", "sigmoidal"), {"base": "yager_s", "p": -2.0}, r"out of range"),
    ],
)
def test_invalid_requests_name_the_valid_choices(args: tuple, params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build(*args, **params)


def test_parameters_reach_the_operator() -> None:
    """Aliases fix p; sigmoidal forwards p to its base; defaults apply when a param is omitted."""
    x = torch.tensor([0.1, 0.5, 0.8], dtype=torch.float64)
    gme = build("forall", "generalized_mean_error", p=1.0)
    torch.testing.assert_close(build("forall", "mae")(x), gme(x))
    rmse = build("forall", "generalized_mean_error", p=2.0)
    torch.testing.assert_close(build("forall", "rmse")(x), rmse(x))
    a, c = torch.tensor([0.7]), torch.tensor([0.4])
    sig3 = build("implication", "sigmoidal", base="yager_s", p=3.0, s=0.001)
    sig2 = build("implication", "sigmoidal", base="yager_s", s=0.001)
    near_linear = {"atol": 1e-3, "rtol": 0.0}  # s -> 0: sigma_I -> I
    torch.testing.assert_close(
        sig3(a, c), build("implication", "yager_s", p=3.0)(a, c), **near_linear
    )
    torch.testing.assert_close(sig2(a, c), build("implication", "yager_s")(a, c), **near_linear)
    assert not torch.allclose(sig2(a, c), sig3(a, c))
    assert not torch.allclose(build("tnorm", "yager", p=1.0)(a, c), build("tnorm", "yager")(a, c))


def test_the_operators_page_lists_every_registered_operator() -> None:
    """docs/operators.md's operator table is the registry's (`python -m dfl_bench.operators`
    writes it)."""
    from dfl_bench.operators.registry import markdown_table

    readme = (CONF.parent / "docs" / "operators.md").read_text()
    begin = readme.index("<!-- operators: generated by python -m dfl_bench.operators -->")
    end = readme.index("<!-- end of the operator table -->")
    assert markdown_table() in readme[begin:end], "run python -m dfl_bench.operators"


def test_a_boolean_is_no_number_for_a_parameter():
    with pytest.raises(ValueError, match=r"p=True is a boolean, not a number; p must be"):
        build("tnorm", "yager", p=True)
    assert build("tnorm", "yager", p="2").keywords["p"] == 2.0  # text that is a number reads


def test_the_parameter_table_read_without_torch_is_the_registrys() -> None:
    """operator_params.json (what a record's operators are checked against without torch) is
    what `python -m dfl_bench.operators` writes from the registry."""
    import json

    from dfl_bench.operator_params import TABLE
    from dfl_bench.operators.registry import param_table

    assert json.loads(TABLE.read_text()) == json.loads(json.dumps(param_table()))


OPERATOR_VALUES = (
    st.none() | st.booleans() | st.floats(-2, 40) | st.integers(-2, 3) | st.text(max_size=2)
)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_table_refuses_an_operator_config_exactly_where_build_does(data) -> None:
    """operator_params.refusal (torch-free) and `build` take the same configs of every kind, but
    the spellings of another registered operator (operator_params.same_operator: `build` makes
    them, a config is refused them)."""
    from dfl_bench.operator_params import refusal, same_operator

    kind = data.draw(st.sampled_from(KINDS))
    name = data.draw(st.sampled_from([*choices(kind), "nosuch"]))
    keys = data.draw(
        st.lists(st.sampled_from(["p", "eps", "s", "b0", "base", "reduction", "zzz"]), max_size=3)
    )
    params = {
        key: data.draw(OPERATOR_VALUES | st.sampled_from(choices("implication"))) for key in keys
    }
    try:
        build(kind, name, **params)
    except (ValueError, TypeError):
        builds = False
    else:
        builds = True
    entry = {"name": name, **params}
    assert (refusal(kind, entry) is None) == (builds and same_operator(kind, entry) is None)
