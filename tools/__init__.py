"""The harness: make bench and sweep (nbrun), make static, nbval to cache."""
