"""The reference validator's real-data cases (bioai-evidence-validator 0.8.0, ``examples/``), run on
our engine from the peer's committed inputs, read in place from its unpacked sdist.

Each case is a module with ``NAME`` (the ``tools/reproduce.py`` step) and ``run(sdist) ->
CaseResult``. Case-specific grounders live in the case module and use only the public API
(``bioevidence.Grounder``, ``Grounding``, ``Finding``): nothing here is special-cased in the engine.
"""
