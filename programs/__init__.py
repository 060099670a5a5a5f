"""DSPy programs and the `ferret` command."""
