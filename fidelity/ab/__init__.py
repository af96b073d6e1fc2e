"""A/B timing: order-alternated runs of two commands and a verdict on their difference.

- `session`: `fidelity ab` from the command line's plain values: commands parsed, arms run
- `runner`: runs the two arms order-alternated (or reads recorded measurements), via proc
- `verdict`: the pure verdict over recorded repetitions, paired or not
- `stats`: exact rank intervals for a shift between two samples (Hodges-Lehmann)
- `ranks`: the null distribution of the Mann-Whitney count, exact up to a size, then normal
- `pairdiffs`: order statistics of the pairwise differences, without the m x n array
"""
