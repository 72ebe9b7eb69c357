"""kperf.memscope - the analyzers of `kperf-bpf memscope` recordings, msMemScope's API.

The same functions and classes as the msmemscope package (list_analyzers,
get_analyzer_config, analyze, check_leaks, check_inefficient, LeaksAnalyzer, LeaksConfig,
InefficientAnalyzer, InefficientConfig, MemScopeError), which holds them: it needs only the
standard library, so a recording can be analyzed where libkperf-bpf is not installed.
Recording is `kperf-bpf memscope` (README, "Memory: kperf-bpf memscope").
"""

import os
import sys

try:
    import msmemscope as _ms
except ImportError:  # the package sits next to this one in the source tree and when installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import msmemscope as _ms

from msmemscope import (COLUMNS, MemScopeError, analyze, check_inefficient,  # noqa: F401,E402
                        check_leaks, get_analyzer_config, list_analyzers, load)
from msmemscope.analyzer import (INEFFICIENT_TYPES, InefficientAnalyzer,  # noqa: F401,E402
                                 InefficientConfig, Inefficiency, Leak, LeakReport,
                                 LeaksAnalyzer, LeaksConfig)

__all__ = list(_ms.__all__) + ["LeaksAnalyzer", "LeaksConfig", "InefficientAnalyzer",
                               "InefficientConfig"]
