#!/usr/bin/env python3
"""The create, exec and memory rows of bench/bench.py, which runs every row
in one invocation; this name stays so that the old command still works.

    sudo AGENT_SANDBOX_BUILDDIR=$PWD bench/bench_sandboxes.py [--rounds N]

Any option of bench.py may be given (bench/bench.py --help).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(HERE, "bench.py"),
                          "--only", "create,exec,memory"] + sys.argv[1:])
