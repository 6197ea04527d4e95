"""The fix stage: the feedback loop around a model, drafts, the review queue and audits.

* :mod:`.revise` -- ``revise()``/``arevise()``: validate proposals, feed fixable findings
  back, carry verified evidence, route the rest to a person;
* :mod:`.draft` -- compact drafts to full records, and their JSON Schema;
* :mod:`.queue` -- the review queue (SQLite) and human decisions;
* :mod:`.audit` and :mod:`.stats` -- blinded audit samples, exact error bounds, agreement.
"""
