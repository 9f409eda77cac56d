"""Building blocks shared by several units (pipelines, stream adapters)."""
