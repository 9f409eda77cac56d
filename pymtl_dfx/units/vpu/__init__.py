"""Vector processing unit: element-wise FP16 operations, reductions and special functions."""
