"""`python -m bench.perf`: the speed benchmark (see bench.perf)."""
from bench.perf import main

raise SystemExit(main())
