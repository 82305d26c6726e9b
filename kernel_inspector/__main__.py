"""`python -m kernel_inspector FILE.py`: a kernel file's registers, occupancy and floors per GPU (cli.py)."""
import sys

from kernel_inspector.cli import main

sys.exit(main(sys.argv[1:]))
