"""A DFX compute core composed of its units (any unit at any level)."""
