"""Where the repository and its Hydra configs are."""

from __future__ import annotations

from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
CONFIG_DIR = str(REPO_DIR / "conf")
