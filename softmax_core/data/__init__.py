"""Where the library's files are: the GPU catalog (gpus.json, beside this module) and the recorded runs.

The recorded runs (benchmarks, tuning sweeps, the driver's occupancy answers) are the repository's assets/
folder in a checkout. A built wheel carries a copy of that folder here, as softmax_core/data/assets/ (setup.py
copies it at build time), so an installed copy reads the same records with no checkout.
"""
from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent
INSTALLED_ASSETS = DATA_DIR / "assets"
CHECKOUT_ASSETS = DATA_DIR.parents[1] / "assets"


def assets_dir() -> Path:
    """The recorded runs' folder: the wheel's copy when installed, else the checkout's assets/."""
    return INSTALLED_ASSETS if INSTALLED_ASSETS.is_dir() else CHECKOUT_ASSETS
