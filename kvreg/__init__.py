"""kvreg: how many concurrent LLM sequences fit, at which context, on which accelerator.

The Python API (docs/api.md, :mod:`kvreg.api`) is available on the package itself::

    import kvreg
    r = kvreg.fit("llama-3.1-8b", "h100-sxm-80gb", context="8Ki", project="path/to/project")
    r.rows[0]["max_seqs"]   # 58

Four API functions share their names with kvreg's modules (``kvreg/fit.py``, ``plan.py``,
``report/``, ``diff/``).  Those modules are loaded first, then the package attributes are set
to the functions, so ``kvreg.fit(...)`` is always the function while ``from kvreg.fit import
FitResult`` still reads the module (Python finds it in ``sys.modules``).  The imports are light
(no DuckDB, pandas or WeasyPrint).
"""

import kvreg.diff  # noqa: F401  (loaded before the attribute is rebound; see above)
import kvreg.fit  # noqa: F401
import kvreg.plan  # noqa: F401
import kvreg.report  # noqa: F401
from kvreg.api import (FitResult, KvregError, PlanResult, Problem, UsageError, capacity, connect, diff, fit,  # noqa: E402
                       plan, query, report, validate)

__all__ = ["FitResult", "KvregError", "PlanResult", "Problem", "UsageError", "capacity", "connect", "diff", "fit",
           "plan", "query", "report", "validate"]
