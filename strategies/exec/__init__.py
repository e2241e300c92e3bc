"""The external strategy: any program, in any language, over the JSON Lines protocol (protocol.py)."""
from .protocol import VERSION, ExternalError
from .strategy import Exec

__all__ = ["Exec", "ExternalError", "VERSION"]
