"""From a change to its culprit: the suspect commit range, CSIT's bisect trigger, and its results read back.

Modules, one concept each (plain values in, small frozen dataclasses out, so the alerts
stage can call them with what it already holds):

- ``versions``: DUT version strings (VPP ``git describe`` forms, DPDK releases) -> git refs.
- ``suspect``: ``suspect_range(...)`` -> ``SuspectRange``: verdict code / infrastructure /
  unknown, the commit range, its size and link (``outputs.commit-range-url``).
- ``trigger``: ``bisect_request(...)`` -> ``BisectRequest``: the exact CSIT trigger comment.
- ``gerrit``: posting that comment on the change of the first bad commit (Gerrit REST API).
- ``decision``: ``decide(early, mid, late)`` -> ``Decision``: CSIT's MDL choice for one mid commit.
- ``bisect_results``: ``replay(dir)`` -> ``BisectState``: a bisect job's archive read back.
- ``hints``: ``group_by_range(...)`` -> ``RangeGroup``: changes that one bisect serves.
- ``request``: an ``alerts.json`` alert -> its range and request (``pal bisect request``).
- ``show``: the text that ``pal bisect`` prints.
- ``schema``: JSON Schema fragments of the ``to_dict()`` shapes, for alerts.json.

See docs/bisect.md.
"""
