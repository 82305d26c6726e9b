"""One Chromium and one app server for every real-browser test file in this folder (package scope): a server
start and each page's first run in it are paid once, not once per file. A file whose claim needs a server
started otherwise (tests/browser/test_your_kernel_in_chromium.py: running pasted kernels allowed) defines its
own `server`."""
import pytest

from classroom_tools import browser_kit as kit
from tests.support.browser import ARTIFACTS, chromium


@pytest.fixture(scope="package")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture(scope="package")
def server(browser):
    """`streamlit run app.py` as a teacher starts it, without the file watcher (kit.NO_FILE_WATCHER: files
    edited while the tests run must not break them)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with kit.StreamlitServer(log_path=ARTIFACTS / "streamlit-server.log", extra_args=kit.NO_FILE_WATCHER) as srv:
        yield srv
