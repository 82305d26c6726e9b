"""What the tests share: the AppTest session helper, the real-browser tests' Chromium and tabs, the float64
reference, recorded benchmark runs made for the tests. Imported as `tests.support.<module>` (pytest puts the
repository root on sys.path, since tests/ is a package)."""
