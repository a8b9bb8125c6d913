"""How long a failure may take to shrink and minimise, by default (``kgc check``, the pytest suite).

Against a live broker every shrink candidate is a real replay, and Hypothesis alone may spend five
minutes shrinking (one stale-commit bug once took 284 s); the command-deletion pass
(``conformance/drivers/minimize.py``) then makes the saved trace 1-minimal if its budget allows.
Measured with 60 s for shrinking (``kgc bench mutants``, 20 mutants killed): Hypothesis used the
whole minute on most of them while the deletion pass left traces of 1 to 3 commands in the median,
so 30 s. Kept in a module of its own so the command line can show them without importing the suite.
"""

SHRINK_BUDGET_S = 30.0  # Hypothesis's shrinking (``Search(shrink_budget_s=…)``)
MINIMIZE_BUDGET_S = 30.0  # the deletion passes after it (``Output(minimize_budget_s=…)``)
