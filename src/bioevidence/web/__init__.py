"""The review pages in a browser (``bioevidence serve``): an interface over the stages, no logic of its own.

=================  =================================================================================
module             what
=================  =================================================================================
``app``            the FastAPI application, middleware (hosts, body size, security headers), sign-in
``review_pages``   the queue with its filters, a record with its evidence, decisions
``navigation``     the filter carried from page to page, and the next entry to decide
``evidence``       each quote inside its pinned passage, through the gate's literature grounder
``audit_pages``    decisions over time, by code and reviewer, agreement, audit scores, CSV exports
``auditing``       what the audit page counts (pure functions of the queue listing)
``charts``         server-rendered SVG
``ask_pages``      question → librarian → cited answer over server-sent events → the review queue
``sessions``       server-side sessions, CSRF tokens, sign-in rate limits
``secret``         the session secret (environment or an owner-only file)
``state``          per-thread queue connections, shared validators, the listing
=================  =================================================================================

Needs the ``web`` extra (FastAPI, uvicorn, Jinja2, argon2-cffi, python-multipart); ``import
bioevidence`` never imports this package. See ``docs/web.md``.
"""
