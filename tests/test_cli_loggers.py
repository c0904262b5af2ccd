"""Loggers of the CLI: W&B is offline unless logged in (WANDB_MODE wins); csv and none."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from lightning.pytorch.loggers import CSVLogger

from dfl_bench import loggers


@pytest.fixture
def no_login(monkeypatch, tmp_path):
    """No W&B key anywhere: no env variables, an empty home (no ~/.netrc)."""
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_BASE_URL", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_offline_unless_logged_in(no_login):
    assert not loggers.wandb_logged_in()
    assert loggers.wandb_mode("auto") == "offline"


def test_an_api_key_in_the_environment_means_online(no_login, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert loggers.wandb_mode("auto") == "online"


def test_a_netrc_entry_for_the_wandb_host_means_online(no_login):
    netrc = no_login / ".netrc"
    netrc.write_text("machine api.wandb.ai\n  login user\n  password " + "x" * 40 + "\n")
    netrc.chmod(0o600)
    assert loggers.wandb_mode("auto") == "online"
    netrc.write_text("machine example.org\n  login user\n  password secret\n")
    assert loggers.wandb_mode("auto") == "offline"


def test_wandb_mode_environment_wins_then_the_config(no_login, monkeypatch):
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    assert loggers.wandb_mode("disabled") == "disabled"
    monkeypatch.setenv("WANDB_MODE", "offline")
    assert loggers.wandb_mode("online") == "offline"


def test_unknown_mode_and_kind_name_the_valid_choices(tmp_path):
    with pytest.raises(ValueError, match=r"choose one of \['auto', 'online'"):
        loggers.wandb_mode("sometimes")
    with pytest.raises(ValueError, match=r"choose one of \['wandb', 'csv', 'none'\]"):
        loggers.build_logger(
            {"kind": "tensorboard"}, name="n", group="g", config={}, save_dir=tmp_path
        )


def test_csv_and_none_loggers(tmp_path):
    csv = loggers.build_logger({"kind": "csv"}, name="n", group="g", config={}, save_dir=tmp_path)
    assert isinstance(csv, CSVLogger) and loggers.log_dir(csv) == str(tmp_path / "csv")
    none = loggers.build_logger({"kind": "none"}, name="n", group="g", config={}, save_dir=tmp_path)
    assert none is None and loggers.log_dir(none) is None


def test_summary_holds_the_record_fields_with_nan_as_null(no_login, monkeypatch):
    from wandb_offline import summary

    monkeypatch.setenv("WANDB_MODE", "offline")
    record = {"experiment": "implications", "row": "godel", "seed": 2, "profile": "smoke"}
    record.update(status="ok", reason=None, test_accuracy=0.9, cons_ratio=0.5, cu_ant=math.nan)
    run = loggers.build_logger(
        {"kind": "wandb"}, name="n", group="implications", config={}, save_dir=no_login
    )
    loggers.summarize(run, record)
    loggers.finish(run, failed=False)
    got = summary(Path(loggers.log_dir(run)))
    assert {k: got[k] for k in record} == {**record, "cu_ant": None}
    assert got["cu_cons"] is None and got["best_test_accuracy"] is None
