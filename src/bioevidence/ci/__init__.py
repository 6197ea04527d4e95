"""The CI gate: the GitHub Action's step, annotations, job summary, SARIF and line mapping.

* ``action``: the step behind ``action.yml`` (``bioevidence ci run``, ``python -m bioevidence.ci run``).
* ``lines``: a finding's ``field_path`` to the line of a JSON or YAML record file.
* ``annotations``: ``::error``/``::warning`` workflow commands at those lines.
* ``summary``: the Markdown job summary (``$GITHUB_STEP_SUMMARY``).
* ``sarif``: SARIF 2.1.0 for code scanning (``bioevidence validate --format sarif``).

Nothing here is imported by ``import bioevidence``; the modules load on use.
"""
