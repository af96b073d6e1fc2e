"""The case table and what a case declares: its outputs, their comparison specs, and the files
a case left behind. Above the verdict (a table names the findings it accepts), below the run
machinery that reads it.

- `table`: case tables: TOML matrices validated against the shipped schema, frozen values
- `outputs`: declared outputs: which files a case writes and the name each is compared under
- `specs`: comparison specs: table-wide defaults resolved per case, blocks that misfire
- `files`: the files a case left in its output and cache folders, links never followed
"""
