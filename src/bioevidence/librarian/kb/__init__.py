"""Knowledge bases over a user's own bibliography (issue 14).

``layout`` (the folder and its ledger), ``acquire`` (the full-text ladder, every tier pinned),
``chunks`` (sentence-aligned chunks), ``vectors`` (batched encoding into ``index/dense``),
``build`` (``kb build | merge | stats``), ``modes`` (``kb ask --mode basic|advanced|agentic``).
Nothing here is imported by ``import bioevidence``; the model stack needs ``bioevidence[kb]``.
"""
