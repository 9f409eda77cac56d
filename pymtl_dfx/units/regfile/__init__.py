"""Register file manager: vector register file and operand collection."""
