"""Recorders: each writes one record (CSV + JSON provenance, or a profile) that a page, a test or a document
reads. See bench_tools/__init__.py for the list."""
