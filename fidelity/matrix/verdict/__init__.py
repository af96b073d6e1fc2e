"""The verdict: two sides' evidence judged, case by case, into one outcome and its words.

Pure judgement over values: nothing here starts a case, checks out a revision or reads the
case table. Outputs are compared by the comparator kinds of `fidelity.kinds`, which the
verdict asks and never names. Read from the bottom up.

- `evidence`: what one side of a run produced, as frozen values that round-trip run.json
- `spread`: a nondeterministic case's spread, and whether a difference stays within it
- `compare`: the comparison: pure functions from two sides' evidence to one verdict per case
- `widening`: has the harness loosened a comparison since the baseline's own table
- `findings`: provenance findings: every reason the comparison could not be trusted
- `accept`: findings a table accepts and a prediction expects: shown and counted, never silent
- `ontime`: whether a prediction was committed before the change it predicts (`prediction-late`)
- `predict`: predictions: the move set stated before measuring, so the result can falsify it
- `outcome`: a matrix verdict as a value, and the one rule that makes it an exit code
- `explain`: moved outputs explained from the files kept in the run directory
- `words`: the words of a verdict, shared by the terminal and the Markdown report
- `plain`: the verdict's lines as `-q` prints them, written without rich
- `render`: terminal rendering of a matrix outcome through an injected rich Console
"""
