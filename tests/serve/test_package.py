"""The package as a user installs it: the wheel's contents and metadata, requirements.txt agreeing with
pyproject.toml, and (slow) a fresh virtual environment that installs the wheel and uses it from another
directory, with no checkout on its path."""
from __future__ import annotations

import email.parser
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import softmax_core as sc
from explorer_ui import launcher, server_options

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
NOT_SOURCE = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "test-artifacts", ".devrun-*",
                                    ".pytest_cache", "wheelhouse")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip wheel .` builds, from a copy of the source tree (so no build/ folder of an earlier
    build can add files the source no longer has)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(work / "dist"), str(source)], check=True, timeout=300)
    (built,) = (work / "dist").glob("*.whl")
    return built


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def wheel_metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(zf.read(name).decode())


def tracked(pattern: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if line]


# The library, the packages beside it that the explorer reads, and the explorer.
SHIPPED_PACKAGES = ("softmax_core", "softmax_teaching", "softmax_bench", "kernel_inspector", "explorer_ui")


def test_wheel_carries_the_code_the_data_and_the_app(wheel):
    names = wheel_names(wheel)
    for package in SHIPPED_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "__pycache__" not in path.parts:
                assert path.relative_to(ROOT).as_posix() in names, path
    # every data table the library and the UI read: catalog, words and translation tables
    data = [p for p in (ROOT / "softmax_core").rglob("*") if p.suffix in (".json", ".toml")]
    data += [p for p in (ROOT / "explorer_ui").rglob("*") if p.suffix in (".json", ".toml")]
    assert any(p.name == "gpus.json" for p in data)
    for path in data:
        assert path.relative_to(ROOT).as_posix() in names, path
    # the app's top-level files, where launcher.app_dir() looks for them in an installed copy
    app = launcher.INSTALLED_APP_DIR.relative_to(ROOT / "explorer_ui").as_posix()
    assert f"explorer_ui/{app}/app.py" in names
    assert f"explorer_ui/{app}/.streamlit/config.toml" in names
    pages = [p.name for p in (ROOT / "pages").glob("*.py")]
    assert pages and all(f"explorer_ui/{app}/pages/{name}" in names for name in pages)
    # the recorded runs, where softmax_core.data.assets_dir() looks for them
    records = [p for p in (ROOT / "assets").rglob("*") if p.is_file()]
    assert any(p.suffix == ".csv" for p in records)
    for path in records:
        assert f"softmax_core/data/{path.relative_to(ROOT).as_posix()}" in names, path
    # nothing from outside the shipped packages (tests, scripts, docs) and no compiled leftovers
    tops = {n.split("/")[0] for n in names}
    assert tops == {*SHIPPED_PACKAGES, wheel.name.split("-")[0] + "-" + sc.__version__ + ".dist-info"}
    assert not [n for n in names if n.endswith(".pyc")]


def test_wheel_metadata(wheel):
    meta = wheel_metadata(wheel)
    assert meta["Name"] == "fused-softmax-explorer"
    assert meta["Version"] == sc.__version__
    assert meta["License-Expression"] == "MIT"
    requires = meta.get_all("Requires-Dist")
    assert "torch>=2.11" in requires and "triton>=3.6" in requires
    assert {"app", "test"} <= set(meta.get_all("Provides-Extra"))
    app = [r for r in requires if 'extra == "app"' in r]
    for name in ("streamlit", "altair", "pandas", "pygments", "vl-convert-python"):
        assert any(r.startswith(name) for r in app), name
    with zipfile.ZipFile(wheel) as zf:
        entry_points = zf.read(next(n for n in zf.namelist() if n.endswith("entry_points.txt"))).decode()
    assert re.search(r"^softmax-explorer = explorer_ui\.launcher:main$", entry_points, re.M)


def requirement_bounds(lines) -> dict[str, str]:
    bounds = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if line:
            name, bound = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", line).groups()
            bounds[name.lower()] = bound.replace(" ", "")
    return bounds


def test_requirements_txt_has_the_packages_bounds():
    """The README's `pip install -r requirements.txt` installs what the package declares, at the same bounds."""
    project = PYPROJECT["project"]
    declared = requirement_bounds(project["dependencies"] + sum(project["optional-dependencies"].values(), []))
    listed = requirement_bounds((ROOT / "requirements.txt").read_text().splitlines())
    assert listed == declared


def test_version_is_written_once():
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "softmax_core.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", sc.__version__)


def test_the_server_options_languages_are_the_apps():
    pytest.importorskip("streamlit")
    from explorer_ui.i18n import LANGUAGES

    assert server_options.languages() == sorted(LANGUAGES)


@pytest.mark.slow
def test_fresh_venv_installs_the_wheel_and_runs_outside_the_checkout(wheel, tmp_path):
    """A new virtual environment (system packages visible, so torch is not downloaded again) installs the
    wheel; from a directory with no checkout it imports softmax_core, reads the catalog and the records, plans
    for every catalog GPU, and the entry point answers."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)], check=True,
                   timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    check = """
import os, sys, time
import softmax_core as sc, torch
assert "TRITON_INTERPRET" not in os.environ and "triton" not in sys.modules
assert not [m for m in sys.modules if m.split(".")[0] in ("softmax_teaching", "softmax_bench", "kernel_inspector")]
x = torch.randn(512, 781)
torch.testing.assert_close(sc.softmax(x), torch.softmax(x, -1))     # torch's answer: no interpreter asked for
assert "TRITON_INTERPRET" not in os.environ
from softmax_bench import load_recorded_runs
assert "site-packages" in sc.__file__, sc.__file__
assert load_recorded_runs(), "no recorded runs in the installed copy"
for gpu in sc.gpu_catalog():
    plan = sc.plan_launch(4096, 1024, torch.float32, gpu)
    assert plan.n_regs > 0 and plan.programs_per_sm > 0, (gpu.key, plan)
print(sc.__version__, len(sc.gpu_catalog()))
"""
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(Path.home())}
    out = subprocess.run([str(python), "-c", check], cwd=elsewhere, capture_output=True, text=True, timeout=600,
                         env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[0] == sc.__version__
    explorer = venv / "bin" / "softmax-explorer"
    helped = subprocess.run([str(explorer), "--help"], cwd=elsewhere, capture_output=True, text=True, env=env)
    assert helped.returncode == 0 and "--no-present" in helped.stdout
    bad = subprocess.run([str(explorer), "--lang", "fr"], cwd=elsewhere, capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "unknown language 'fr'" in bad.stderr
    # the installed app's Home and one page run from the installed files (AppTest, no server)
    run_app = """
from streamlit.testing.v1 import AppTest
from explorer_ui import launcher
home = launcher.app_dir() / "app.py"
assert "site-packages" in str(home), home
at = AppTest.from_file(str(home), default_timeout=300).run()
assert not at.exception, [e.value for e in at.exception]
at.switch_page("pages/2_memory_traffic.py").run()
assert not at.exception, [e.value for e in at.exception]
print("app ok")
"""
    out = subprocess.run([str(python), "-c", run_app], cwd=elsewhere, capture_output=True, text=True, timeout=600,
                         env={**env, "SOFTMAX_EXPLORER_PREWARM": "0"})
    assert out.returncode == 0 and "app ok" in out.stdout, out.stderr[-3000:]
