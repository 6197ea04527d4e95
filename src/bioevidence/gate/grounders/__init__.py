"""Grounders: recompute from pinned bytes what a record only asserts (see ``docs/grounders.md``).

Heavy modules (lxml through the literature grounder) are imported only by the grounder that
needs them; import the grounder classes from their modules or build them with
:func:`bioevidence.gate.grounders.config.build_grounders`.
"""
