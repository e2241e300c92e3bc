"""`python -m bench.testing`: run the loopback server by hand (see server.main)."""
from bench.testing.server import main

raise SystemExit(main())
