"""`python -m softmax_bench`: a benchmark sweep on this GPU (softmax_bench/cli.py)."""
import sys

from softmax_bench.cli import main

sys.exit(main())
