"""A/B timing: order-alternated runs of two commands and a verdict on their difference."""
