"""_libkperf - the ctypes layer of libkperf's Python package, on kperf-bpf.

libkperf's kperf and ksym modules are built on this module, and its tests and some users reach
into it (the Ctypes* structs, the C functions by their C names). Here it is a thin layer over
kperf and ksym: the Ctypes* classes are the struct mirrors of kperf._cstructs with libkperf's
constructors, the other classes are kperf's, and the functions call kperf's. As in libkperf,
_libkperf.Symbol is the Symbol class (the module is _libkperf.Symbol in sys.modules).
"""

from .Config import *  # noqa: F401,F403
from .Symbol import *  # noqa: F401,F403
from .Pmu import *  # noqa: F401,F403
from .Perror import *  # noqa: F401,F403
from .Config import VERSION

__version__ = VERSION
