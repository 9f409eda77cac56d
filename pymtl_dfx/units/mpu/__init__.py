"""Matrix processing unit: MFU tree MACs and the matrix-side special functions."""
