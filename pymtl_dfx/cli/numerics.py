"""`dfx numerics`: the special functions' measured error table."""

from . import common


def add_parser( add ):
  p = add( "numerics",
           help="measured error of exp/recip/rsqrt/gelu",
           description="The special functions' error over every finite FP16 input, "
                       "against float64.",
           epilog="example:\n  dfx numerics --json" )
  common.add_json( p )


def run( args ):
  from ..numerics.error_report import markdown_table, measure_all
  rows = measure_all()
  if getattr( args, "json", False ):
    import dataclasses
    import json
    print( json.dumps( { "functions": [ dataclasses.asdict( r ) for r in rows ] }, indent=2 ) )
    return
  print( markdown_table( rows ), end="" )
