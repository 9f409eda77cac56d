"""The control unit's boundary, the same at FL, CL and RTL:

  inst      the program's instruction words (`InstMsg`), into the buffer
  issue[u]  an instruction word to unit u (indexed like `UNITS`: DMA, MPU,
            VPU, router)
  done[u]   unit u's completion token (`DoneMsg`), one per instruction, in
            issue order
  idle      nothing buffered and nothing in flight (what a core reports to
            the host)
"""

from .msgs import UNITS
from .msgs import DoneMsg, InstMsg


def declare_ports( s ):
  from pymtl3 import OutPort
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  s.issue = [ SendIfcRTL( InstMsg ) for _ in UNITS ]
  s.done = [ RecvIfcRTL( DoneMsg ) for _ in UNITS ]
  s.inst = RecvIfcRTL( InstMsg )
  s.idle = OutPort()
