"""slurmtune's Python side.

- ``slurmtune.client``: the report client for trial scripts (standard library only):
  ``from slurmtune import client; client.report(step=3, val_loss=0.41)``.
- ``slurmtune.study``: post-hoc analysis of a results file (needs h5py, pandas; matplotlib
  for plots): ``from slurmtune.study import Study``.

Importing the package itself needs nothing beyond the standard library.
"""

__all__ = ["client", "study"]
