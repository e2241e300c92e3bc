"""Bad input is reported as a list of one-line problems, never a traceback."""
from __future__ import annotations


class BadInput(Exception):
    """Raised with every problem found; the CLI prints one line each and exits 2."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class ModelError(Exception):
    """A model call failed after its retries (HTTP error, timeout, unusable answer)."""
