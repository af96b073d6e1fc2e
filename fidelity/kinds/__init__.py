"""Comparator kinds: how one output is judged by value once its bytes differ.

A kind is one module meeting the `Kind` protocol and one row in the registry (as
pre-commit adds a language); the matrix's verdict, the words of a report and the HTML page
ask a kind what it needs and never test its name. Tolerances follow numpy's `isclose`,
relative to the baseline value: |cand - base| <= atol + rtol * |base|.

- `base`: the `Kind` protocol, and the answers most kinds share
- `registry`: every kind by its name, a spec's problems, and the one entry that explains
- `rawbytes`: kind `bytes`: the bytes alone decide
- `delimited`: kinds `csv` and `tsv`: one module, the separator its parameter
- `jsontree`: kind `json`: two documents walked path by path
- `jsonordinal`: its bulk road: numbers parsed as their ordinals, moved ones compared in C
- `jsonvalues`: parsed JSON values as its walks meet them, read back as `json.loads` would
- `jsonbulk`: numbers two documents spell differently, judged in bulk, paths made on demand
- `numberrun`: numbers that differ, met in a row by a walk, judged in bulk
- `textdiff`: kind `text`: a diff that reads like a review, bounded for any input
- `linediff`: the line diff behind it: patience anchors, Myers between them, under a budget
- `textreview`: an edit script as a reviewer reads it: reordered lines apart from changes
- `npyarray`: kind `npy`: NumPy arrays element by element, in bounded memory
- `diffs`: what a comparison finds: differences, tolerances, one output's explanation
- `sources`: an output to compare, as a file in the run directory or as bytes
- `ignores`: the JSON comparator's `ignore` entries (paths and bare keys)
- `csvread`: a CSV/TSV output read in chunks of cell texts, without pandas when it is plain
- `csvblock`: rows that arrive in step, compared a whole column at a time
- `csvcmp`: CSV/TSV outputs compared by value, rows aligned on key columns
- `csvseries`: a CSV/TSV output's moved columns as numbers, for the report's figures
"""
