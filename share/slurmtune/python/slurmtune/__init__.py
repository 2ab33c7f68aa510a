"""slurmtune's Python side.

- ``slurmtune.study``: post-hoc analysis of a study file (needs h5py, pandas; matplotlib
  for plots): ``from slurmtune.study import Study``.

Importing the package itself needs nothing beyond the standard library.
"""

__all__ = ["study"]
