"""The external strategy: any program, in any language, over the JSON Lines protocol (protocol.py)."""
from bench.strategies.exec.protocol import VERSION, ExternalError
from bench.strategies.exec.strategy import Exec

__all__ = ["Exec", "ExternalError", "VERSION"]
