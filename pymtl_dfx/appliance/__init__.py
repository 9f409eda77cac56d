"""N DFX cores on a ring plus the host that runs text generation on them."""
