"""`python -m bench.testing`: run the loopback server by hand (see server.main)."""
from .server import main

raise SystemExit(main())
