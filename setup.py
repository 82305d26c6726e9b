"""The build step pyproject.toml cannot say by itself: the explorer's entry script, its pages and its
Streamlit config live at the top of the repository (so that `streamlit run app.py` works in a checkout), and
the recorded runs in assets/. A wheel carries copies of them inside its packages, so that an installed copy
runs the app and reads the records with no checkout:

    app.py, pages/*.py, .streamlit/config.toml  ->  explorer_ui/app/
    assets/                                      ->  softmax_core/data/assets/

Everything else about the package is declared in pyproject.toml.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# repository path -> (path inside the wheel, file pattern when it is a folder)
SHIPPED = {
    "app.py": ("explorer_ui/app/app.py", None),
    "pages": ("explorer_ui/app/pages", "*.py"),
    ".streamlit/config.toml": ("explorer_ui/app/.streamlit/config.toml", None),
    "assets": ("softmax_core/data/assets", "**/*"),
}


class BuildWithAppFiles(build_py):
    """build_py, then the top-level app files and the recorded runs copied into the built packages."""

    def run(self):
        super().run()
        if self.editable_mode:      # an editable install runs from the checkout, where these already are
            return
        for source, (target, pattern) in SHIPPED.items():
            src, dst = HERE / source, Path(self.build_lib) / target
            files = [src] if pattern is None else sorted(p for p in src.glob(pattern) if p.is_file())
            for path in files:
                out = dst if pattern is None else dst / path.relative_to(src)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, out)


setup(cmdclass={"build_py": BuildWithAppFiles})
