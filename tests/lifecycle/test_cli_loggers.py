"""Loggers of the CLI: W&B is offline unless logged in (WANDB_MODE wins); csv and none."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from lightning.pytorch.loggers import CSVLogger
from omegaconf import OmegaConf

from dfl_bench.lifecycle import loggers


def option(name: str) -> dict:
    """conf/logger/<name>.yaml as plain data."""
    return OmegaConf.to_container(OmegaConf.load(loggers.CONF / f"{name}.yaml"))


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


def test_unknown_mode_and_target_name_the_valid_choices():
    with pytest.raises(ValueError, match=r"choose one of \['auto', 'online'"):
        loggers.wandb_mode("sometimes")
    with pytest.raises(ValueError, match=r"does not import; logger options: \['csv', 'none'"):
        loggers.check({"_target_": "lightning.pytorch.loggers.NoSuchLogger"})


def build(cfg, tmp_path):
    """The logger of option `cfg` for a job named n in group g writing under tmp_path."""
    return loggers.build_logger(cfg, name="n", group="g", config={}, save_dir=tmp_path)


def test_csv_and_none_options(tmp_path):
    csv = build(option("csv"), tmp_path)
    assert isinstance(csv, CSVLogger) and loggers.log_dir(csv) == str(tmp_path / "csv")
    none = build(option("none"), tmp_path)
    assert none is None and loggers.log_dir(none) is None


def test_a_new_logger_is_one_option_naming_its_class(tmp_path):
    cfg = {"_target_": "lightning.pytorch.loggers.CSVLogger", "version": "v"}
    csv = build(cfg, tmp_path / "out")
    assert isinstance(csv, CSVLogger) and loggers.log_dir(csv) == str(tmp_path / "out" / "n" / "v")
    other = build({**cfg, "save_dir": str(tmp_path / "mine"), "name": None}, tmp_path / "out")
    assert loggers.log_dir(other) == str(tmp_path / "mine" / "n" / "v")


def test_summary_holds_the_record_fields_with_nan_as_null(no_login, monkeypatch):
    from wandb_offline import summary

    monkeypatch.setenv("WANDB_MODE", "offline")
    record = {"experiment": "implications", "row": "godel", "seed": 2, "profile": "smoke"}
    record.update(status="ok", reason=None, test_accuracy=0.9, cons_ratio=0.5, cu_ant=math.nan)
    run = loggers.build_logger(
        option("wandb"), name="n", group="implications", config={}, save_dir=no_login
    )
    loggers.summarize(run, record)
    loggers.finish(run, failed=False)
    got = summary(Path(loggers.log_dir(run)), wait_for=record)
    assert {k: got[k] for k in record} == {**record, "cu_ant": None}
    assert got["cu_cons"] is None and got["best_test_accuracy"] is None


def test_online_wandb_without_a_key_is_refused_before_training(no_login, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "online")
    with pytest.raises(ValueError, match="W&B online mode needs an API key"):
        loggers.check(option("wandb"))
    loggers.check(option("csv"))  # other loggers: nothing to reach


def test_online_wandb_whose_host_does_not_answer_is_refused_in_seconds(no_login, monkeypatch):
    import time

    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")  # nothing listens on port 9
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"127\.0\.0\.1:9 cannot be reached within 5 s"):
        loggers.check(option("wandb"))
    assert time.monotonic() - start < loggers.ONLINE_TIMEOUT_S + 1
    monkeypatch.setenv("WANDB_MODE", "offline")
    loggers.check(option("wandb"))  # offline needs neither
