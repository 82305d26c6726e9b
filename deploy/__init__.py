"""Serving a class: the tools here run as scripts (`python deploy/serve_class.py`) and import as modules
(`from deploy import serve_class`) from a checkout, as tests/serve/test_proxy.py does. Not part of the wheel."""
