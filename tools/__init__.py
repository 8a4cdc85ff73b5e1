"""Development tools of the book: the benchmark, the seed sweep and the static checks.

Run them through the Makefile (``make bench``, ``make sweep``, ``make test``).
"""
