"""Integer arithmetic rules shared by the models, the compiler and the
elaboration code of the RTL (plain Python; inside @update blocks the RTL
spells its own translatable form)."""


def ceil_div( a, b ):
  """ceil(a / b) for integers, b > 0: e.g. the d-element entries that hold
  a elements (floor division of the negation rounds toward -inf)."""
  return -( -a // b )
