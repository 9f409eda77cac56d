"""Drive an instruction-executing unit: instruction words in, done tokens out."""

from ..isa import encode
from ..units.control.msgs import DoneMsg, InstMsg
from .harness import run_stream_test


def run_instructions( dut, insts, level, cmdline_opts=None, max_delay=0, seed=0 ):
  words = [ InstMsg( encode( i ) ) for i in insts ]
  return run_stream_test( dut, sources={ "recv": ( InstMsg, words ) },
                          sinks={ "send": ( DoneMsg, [ DoneMsg( 1 ) ] * len( words ) ) },
                          level=level, cmdline_opts=cmdline_opts, max_delay=max_delay,
                          seed=seed )
