"""The data that flows through the pipeline: evidence (what a source printed), facts (what a parser read from it),
and the combiners that derive facts from other facts."""
