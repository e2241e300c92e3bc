"""The one argument parser every subcommand uses: a usage error is bad input like any other (one line,
exit 2, through `bench.cli.guarded`), and `--help` prints and exits 0."""
from __future__ import annotations

import argparse

import re

from bench.errors import BadInput
from bench.runner.config import SECRET_VALUE, redact_override


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise BadInput(f"{self.prog.removeprefix('compaction-bench ')}: {shown(message)} (see {self.prog} --help)")


def shown(message: str) -> str:
    """argparse's message without a value that may be a secret: it quotes the arguments it did not take
    (`unrecognized arguments: --api-key=sk-...`); each KEY=VALUE is redacted as an override is."""
    message = re.sub(r"\S+=\S+", lambda m: redact_override(m.group().lstrip("-")) if not m.group().startswith("-")
                     else m.group().split("=", 1)[0] + "=***", message)
    return SECRET_VALUE.sub("***", message)
