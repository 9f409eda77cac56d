"""What a run left on disk, for tests that a refused or stopped run wrote
nothing."""

import os
import stat


def tree( *roots ):
  """Every node under the roots (hidden ones too): its kind, size, inode
  and modification time, so that a write, a replace or a new node shows."""
  out = {}
  for root in roots:
    for dirpath, dirs, files in os.walk( root ):
      for n in dirs + files:
        p = os.path.join( dirpath, n )
        s = os.lstat( p )
        out[ p ] = ( stat.S_IFMT( s.st_mode ), s.st_size, s.st_ino, s.st_mtime_ns )
  return out
