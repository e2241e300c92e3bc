"""`python -m bench`: the same as the `compaction-bench` command."""
import sys

from bench.cli import main

sys.exit(main())
