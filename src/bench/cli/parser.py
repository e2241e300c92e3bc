"""The one argument parser every subcommand uses: a usage error is bad input like any other (one line,
exit 2, through `bench.cli.guarded`), and `--help` prints and exits 0."""
from __future__ import annotations

import argparse

from bench.errors import BadInput


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{self.prog.removeprefix('compaction-bench ')}: {message} (see {self.prog} --help)")
