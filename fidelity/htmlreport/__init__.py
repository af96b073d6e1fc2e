"""One self-contained HTML page per run: the verdict, every case, what moved, with plots.

The page needs nothing when opened: its style and script are inline (the script allowed by
its hash in the page's Content-Security-Policy, which also forbids every network request),
its plots are SVG drawn by matplotlib, and every text a case wrote is escaped. Imported
only by the commands that write a page, so that matplotlib never loads otherwise.

- `page`: the document: head, policy, inline style and script, escaping, the size budget
- `cases`: the case table of a matrix run: a row per case, filtered and sorted in the page
- `values`: a moved case's value-level differences (old -> new) and its log tails
- `plots`: baseline against candidate per moved numeric column, as embedded SVG
- `runpage`: a matrix outcome as a page: the verdict, provenance, prediction, cases, plots
- `controlspage`: a controls report as a page: controls x tests, and tests never seen to fail
- `source`: `fidelity report RUN_DIR`: the page for a matrix run or a controls run directory
"""
