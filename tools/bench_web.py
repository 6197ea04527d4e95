"""Benchmark: 50 reviewers at once on ``bioevidence serve`` over a 10,000-record review queue, on loopback.

Setup (once per ``--workdir``, reused after): 10,000 CIViC records (``tests/web/civic_queue.py``:
real quotes from the pinned papers, the faults reviewers meet) validated with the snapshot
grounders and queued, and one account per reviewer. Then the real server starts in its own process
(``bioevidence serve --port 0``) and each reviewer, concurrently (asyncio, one HTTP connection each):

    sign in; then ``--decisions`` times: open a page of the open queue, open a record, decide it
    (accept / reject / defer with a reason); one form in ``--resend`` is sent twice (a double click).

Afterwards the queue file is checked against what the reviewers were told: every decision the
server confirmed is in the file exactly once (by its request id), with that reviewer, entry and
decision; no other decision exists; re-sent forms made no second decision; the ledger verifies
(``review verify``); and every entry's record carries each reviewer's latest decision. Latency
percentiles are printed per kind of request. The client shares the 2 cores with the server.

    .venv/bin/python tools/bench_web.py [--reviewers 50] [--records 10000] [--decisions 20] [--markdown]

``--markdown`` ends a run with its docs/web.md tables: the load run's (region ``web-load``), ``--scenario
curator``'s (``web-curator``), ``--scenario long``'s (``web-long``) and ``--scenario asks``'s (``web-asks``: one
reviewer's questions, then 16 reviewers', ``--rounds`` bursts each); the timing steps of the same names in
``tools/reproduce.py`` run them with ``--timings``.

Bounded: every request has a 60 s timeout and the whole run ``--deadline`` seconds (default 900).
Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BIOEVIDENCE_SHARED_DATA", REPO.parent / "shared" / "data"))
SNAPSHOTS = DATA / "civic_corpus" / "snapshots"
PASSWORD = "benchmark password, loopback only"
sys.path.insert(0, str(REPO / "tests" / "web"))


def build(workdir: Path, records: int, reviewers: int) -> Path:
    queue = workdir / f"queue-{records}.sqlite"
    if queue.exists():
        return queue
    import civic_queue

    from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
    from bioevidence.gate.validator import Validator
    from bioevidence.loop.queue import ReviewQueue

    t0 = time.perf_counter()
    validator = Validator(None, grounders=build_grounders(GrounderOptions(snapshot_dir=SNAPSHOTS)))
    partial = queue.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    with ReviewQueue(partial) as q:
        for record in civic_queue.records(DATA, records):
            report = validator.validate(record)
            q.add(record, report, reason=f"{report.overall_status}: {', '.join(report.reason_codes())}",
                  profile="literature-claim")
        for n in range(reviewers):
            q.accounts.add(f"reviewer{n:02d}", role="reviewer", password=PASSWORD, reviewer_id=f"orcid:bench-{n:02d}")
    for suffix in ("-wal", "-shm"):
        Path(str(partial) + suffix).unlink(missing_ok=True)
    partial.rename(queue)
    print(f"setup: {records} records queued and {reviewers} accounts made in {time.perf_counter() - t0:.1f} s")
    return queue


def start(queue: Path, log: Path, *extra: str) -> tuple[subprocess.Popen[str], str, float]:
    t0 = time.perf_counter()
    with open(log, "ab") as err:
        process = subprocess.Popen([sys.executable, "-m", "bioevidence", "serve", "--queue", str(queue), "--port", "0",
                                    "--snapshot-dir", str(SNAPSHOTS), *extra], stdout=subprocess.PIPE, stderr=err,
                                   text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.match(r"serving (http://127\.0\.0\.1:\d+)/", line)
    if match is None:
        process.kill()
        raise SystemExit(f"serve did not start: {line!r}; see {log}")
    import httpx

    while True:
        try:
            if httpx.get(match.group(1) + "/healthz", timeout=5).text == "ok":
                return process, match.group(1), time.perf_counter() - t0
        except httpx.TransportError:
            time.sleep(0.05)


class Reviewer:
    def __init__(self, n: int, url: str, rng: random.Random, connections: int = 1) -> None:
        import httpx

        self.name = f"reviewer{n:02d}"
        self.reviewer_id = f"orcid:bench-{n:02d}"
        self.http = httpx.AsyncClient(base_url=url, timeout=600, limits=httpx.Limits(max_connections=connections))
        self.cookies: dict[str, str] = {}
        self.rng = rng
        self.latency: dict[str, list[float]] = {"sign-in": [], "queue page": [], "record page": [], "decide": []}
        self.confirmed: list[dict[str, Any]] = []
        self.resent = 0
        self.errors: list[str] = []

    async def _call(self, kind: str, method: str, path: str, data: dict[str, str] | None = None) -> Any:
        headers = {"cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        t0 = time.perf_counter()
        response = await self.http.request(method, path, data=data, headers=headers)
        self.latency[kind].append(time.perf_counter() - t0)
        for header in response.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        return response

    async def sign_in(self) -> bool:
        page = await self._call("sign-in", "GET", "/login")
        token = re.search(r'name="token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        signed = await self._call("sign-in", "POST", "/login", {"name": self.name, "password": PASSWORD,
                                                                "token": token})
        if signed.status_code != 303:
            self.errors.append(f"sign-in {signed.status_code}")
        return bool(signed.status_code == 303)

    async def run(self, decisions: int, resend: float, total: int) -> None:
        if not await self.sign_in():
            return
        for _ in range(decisions):
            listing = await self._call("queue page", "GET", f"/queue?state=open&page={self.rng.randint(1, 150)}")
            ids = [int(x) for x in re.findall(r'<tr data-entry="(\d+)"', listing.text)]
            entry = self.rng.choice(ids) if ids else self.rng.randint(1, total)
            record = await self._call("record page", "GET", f"/entries/{entry}")
            if record.status_code != 200:
                self.errors.append(f"record {entry}: {record.status_code}")
                continue
            fields = dict(re.findall(r'name="(csrf|request_id)" value="([^"]+)"', record.text))
            decision = self.rng.choice(["accept", "accept", "reject", "defer"])
            form = {**fields, "decision": decision, "rationale": f"{decision}: read the passage ({self.name})"}
            for attempt in range(2 if self.rng.random() < resend else 1):
                done = await self._call("decide", "POST", f"/entries/{entry}/decide", form)
                if done.status_code != 303:
                    self.errors.append(f"decide {entry}: {done.status_code} {done.text[:200]}")
                    break
                if attempt == 0:
                    self.confirmed.append({"request_id": fields["request_id"], "entry": entry, "decision": decision,
                                           "location": done.headers["location"]})
                else:
                    self.resent += 1
                    if _decided(done.headers["location"]) != _decided(self.confirmed[-1]["location"]):
                        self.errors.append(f"a re-sent form on entry {entry} answered with another decision")


def _decided(location: str) -> str | None:
    """The decision a decide answer names (``decided=N``; the page it opens is the next entry to decide)."""
    found = re.search(r"[?&]decided=(\d+)", location)
    return found.group(1) if found else None


async def load(url: str, reviewers: int, decisions: int, resend: float, total: int, seed: int,
               deadline: float) -> list[Reviewer]:
    crowd = [Reviewer(n, url, random.Random(seed * 1000 + n)) for n in range(reviewers)]
    try:
        await asyncio.wait_for(asyncio.gather(*(r.run(decisions, resend, total) for r in crowd)), deadline)
    finally:
        for r in crowd:
            await r.http.aclose()
    return crowd


def check(queue: Path, crowd: list[Reviewer]) -> list[str]:
    """What the file holds against what the server confirmed (see module docstring)."""
    problems: list[str] = []
    db = sqlite3.connect(queue)
    requests = {r[0]: (r[1], r[2], r[3]) for r in db.execute(
        "SELECT q.request_id, q.entry_id, d.decision, d.reviewer_id FROM decision_requests q "
        "JOIN decisions d ON d.id = q.decision_id")}
    made = db.execute("SELECT count(*) FROM decisions").fetchone()[0]
    confirmed = [(r, c) for r in crowd for c in r.confirmed]
    for reviewer, c in confirmed:
        stored = requests.get(c["request_id"])
        if stored != (c["entry"], c["decision"], reviewer.reviewer_id):
            problems.append(f"confirmed decision {c['request_id']} is {stored} in the file, not "
                            f"{(c['entry'], c['decision'], reviewer.reviewer_id)}")
    if made != len(confirmed) or len(requests) != len(confirmed):
        problems.append(f"{made} decisions in the file ({len(requests)} request ids) for {len(confirmed)} confirmed")
    for entry, record_json in db.execute(
            "SELECT d.entry_id, d.record_json_after FROM decisions d WHERE d.id = "
            "(SELECT max(id) FROM decisions e WHERE e.entry_id = d.entry_id)"):
        carried = {a["reviewer"]["id"]: a["decision"] for a in json.loads(record_json)["adjudications"]}
        latest = dict(db.execute("SELECT reviewer_id, decision FROM decisions WHERE entry_id = ? ORDER BY id",
                                 (entry,)).fetchall())
        if carried != latest:
            problems.append(f"entry {entry}: the record carries {carried}, the decisions say {latest}")
    db.close()
    verified = subprocess.run([sys.executable, "-m", "bioevidence", "review", "verify", "--queue", str(queue)],
                              capture_output=True, text=True, check=False)
    if verified.returncode != 0:
        problems.append(f"review verify: {verified.stdout.strip()}")
    return problems


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def extra_size() -> tuple[float, list[str]]:
    """MB on disk of the distributions the web extra adds to a core install (its closure minus the core's)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    def closure(names: list[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop().lower().replace("_", "-")
            if name in seen:
                continue
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                continue
            seen.add(name)
            for raw in dist.requires or []:
                req = Requirement(raw)
                if req.marker is None or req.marker.evaluate({"extra": ""}):
                    todo.append(req.name)
        return seen

    core = closure([Requirement(r).name for r in metadata.distribution("bioevidence").requires or []
                    if "extra ==" not in r])
    web = closure(["fastapi", "uvicorn", "jinja2", "argon2-cffi", "python-multipart"]) - core
    size = 0
    for name in web:
        for f in metadata.distribution(name).files or []:
            path = Path(str(f.locate()))
            if path.is_file():
                size += path.stat().st_size
    return size / 1e6, sorted(web)


# -- the curator's scenarios (issue 27) --------------------------------------------------------------
def small_queue(workdir: Path, records: int, *, long_items: int = 0, accounts: int = 2) -> Path:
    """A queue of ``records`` CIViC records (or one record of ``long_items`` evidence items) and
    ``accounts`` accounts, reviewer00 (a reviewer), reviewer01 (an admin), reviewer02...; built once per
    workdir, copied fresh for each run."""
    name = (f"long-{long_items}" if long_items else f"civic-{records}") + (f"-{accounts}" if accounts != 2 else "")
    pristine = workdir / f"queue-{name}.sqlite"
    if not pristine.exists():
        import civic_queue

        from bioevidence.gate.grounders.config import GrounderOptions, build_grounders
        from bioevidence.gate.validator import Validator
        from bioevidence.loop.queue import ReviewQueue

        validator = Validator(None, grounders=build_grounders(GrounderOptions(snapshot_dir=SNAPSHOTS)))
        partial = pristine.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        rows = [civic_queue.long_record(DATA, long_items)] if long_items else civic_queue.records(DATA, records)
        with ReviewQueue(partial) as q:
            for record in rows:
                report = validator.validate(record)
                q.add(record, report, reason=f"{report.overall_status}: {', '.join(report.reason_codes())}",
                      profile="literature-claim")
            for n in range(accounts):
                q.accounts.add(f"reviewer{n:02d}", role="admin" if n == 1 else "reviewer", password=PASSWORD,
                               reviewer_id=f"orcid:bench-{n:02d}")
        for suffix in ("-wal", "-shm"):
            Path(str(partial) + suffix).unlink(missing_ok=True)
        partial.rename(pristine)
    run = workdir / f"run-{name}.sqlite"
    for suffix in ("", "-wal", "-shm", ".session-secret"):
        Path(str(run) + suffix).unlink(missing_ok=True)
    run.write_bytes(pristine.read_bytes())
    return run


def scenario_curator(args: argparse.Namespace) -> None:
    """A curator in Chromium decides ``--entries`` entries of a queue of ``--records`` CIViC records, by
    clicking through the queue and with the keyboard only; page loads and time per entry for each."""
    import curator
    from playwright.sync_api import sync_playwright

    rows: dict[str, tuple[int, int, float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=curator.CHROMIUM, args=curator.FLAGS, headless=True)
        try:
            for flow in ("clicks", "keyboard"):
                queue = small_queue(args.workdir, args.records)
                process, url, _ = start(queue, args.workdir / "serve.log")
                try:
                    context = browser.new_context(base_url=url, viewport={"width": 1280, "height": 900})
                    tab = context.new_page()
                    who = curator.Curator(tab)
                    who.sign_in("reviewer00", PASSWORD)
                    signing_in = who.run.loads
                    if flow == "keyboard" and tab.query_selector("#shortcuts") is None:
                        print("keyboard: this server shows no keyboard shortcuts")
                        continue
                    run = getattr(who, flow)(args.entries)
                    context.close()
                finally:
                    process.terminate()
                    process.wait(timeout=30)
                    if process.stdout is not None:
                        process.stdout.close()
                made = sqlite3.connect(queue).execute("SELECT count(*) FROM decisions").fetchone()[0]
                per = run.seconds / max(1, len(run.decisions))
                print(f"{flow:<8}: {len(run.decisions)} entries decided ({made} decisions in the file) in "
                      f"{run.loads} page loads ({signing_in} of them signing in), {run.seconds:.1f} s, "
                      f"{per * 1000:.0f} ms per entry; {dict(collections.Counter(d.decision for d in run.decisions))}")
                if made != len(run.decisions) or len(run.decisions) != args.entries:
                    raise SystemExit(f"{flow}: {len(run.decisions)} entries decided of {args.entries}, "
                                     f"{made} decisions in the file")
                rows[flow] = (run.loads - signing_in, signing_in, per)
        finally:
            browser.close()
    if args.markdown:  # docs/web.md's table (its region web-curator)
        how = {"clicks": "clicking: queue → entry → decide → back to the queue",
               "keyboard": "keys only: `n`, then `a`/`r`/`d`, the reason, `Ctrl`+`Enter`"}
        print(f"\n| how | page loads for {args.entries} entries | time per entry (scripted, no reading) |")
        print("|---|---:|---:|")
        for flow, (loads, signing_in, per) in rows.items():
            strong = "**" if flow == "keyboard" else ""
            print(f"| {how[flow]} | {strong}{loads}{strong} (+ {signing_in} signing in) | "
                  f"{strong}{per * 1000:,.0f} ms{strong} |")


async def _timed(client: Reviewer, path: str, repeat: int, pause: float = 0.0) -> list[tuple[float, int, int]]:
    out = []
    for n in range(repeat):
        if n and pause:
            await asyncio.sleep(pause)
        t0 = time.perf_counter()
        response = await client._call("record page", "GET", path)
        out.append((time.perf_counter() - t0, len(response.content), response.status_code))
    return out


def scenario_long(args: argparse.Namespace) -> None:
    """The page of one record with ``--items`` evidence items: size and time, then every page of its
    items and each closest passage asked for on demand. The first view is the median of ``--starts``
    fresh servers (each reads the record's papers once); the rest is measured on the last one."""
    queue = small_queue(args.workdir, 0, long_items=args.items)
    figures: dict[str, Any] = {"first": []}

    async def go(url: str, last: bool) -> None:
        who = Reviewer(0, url, random.Random(1))
        try:
            await who.sign_in()
            first = await _timed(who, "/entries/1", 1)
            figures["first"].append(first[0][0])
            figures["kb"] = first[0][1] / 1e3
            if not last:
                return
            warm = await _timed(who, "/entries/1", args.repeat)
            figures["again"] = statistics.median(t for t, _, _ in warm)
            print(f"entry with {args.items} items: {figures['kb']:.0f} kB, first {first[0][0] * 1000:.0f} ms "
                  f"(median of {len(figures['first'])} starts {statistics.median(figures['first']) * 1000:.0f} ms), "
                  f"then median {figures['again'] * 1000:.0f} ms over {args.repeat}")
            page = (await who._call("record page", "GET", "/entries/1")).text
            pages = re.search(r"Items page 1 of (\d+)", page)
            if pages:
                every = [await _timed(who, f"/entries/1?items={n}", 1) for n in range(2, int(pages.group(1)) + 1)]
                sizes = [r[0][1] for r in every]
                figures["pages"] = (len(every), sum(sizes) / 1e3 / len(sizes),
                                    statistics.fmean(r[0][0] for r in every))
                print(f"its other {len(every)} pages of items: {figures['pages'][1]:.0f} kB and "
                      f"{figures['pages'][2] * 1000:.0f} ms each on average")
            links = re.findall(r'href="(/entries/1/items/\d+/closest)"', page)
            if links:
                done = [await _timed(who, link, 1) for link in links]
                figures["closest"] = (len(done), statistics.fmean(r[0][0] for r in done))
                print(f"closest passage on demand: {len(done)} on the first page, "
                      f"{figures['closest'][1] * 1000:.0f} ms each on average")
        finally:
            await who.http.aclose()

    for n in range(args.starts):
        process, url, _ = start(queue, args.workdir / "serve.log")
        try:
            asyncio.run(go(url, n == args.starts - 1))
        finally:
            process.terminate()
            process.wait(timeout=30)
            if process.stdout is not None:
                process.stdout.close()
    if args.markdown:  # docs/web.md's table (its region web-long)
        print(f"\n| a record of {args.items} evidence items | page | first view | again |")
        print("|---|---:|---:|---:|")
        print(f"| 20 items a page, closest passages on demand | {figures['kb']:.0f} kB | "
              f"{statistics.median(figures['first']) * 1000:,.0f} ms | {figures['again'] * 1000:,.0f} ms |")
        if "pages" in figures:
            count, kb, mean = figures["pages"]
            print(f"| each of its other {count} pages of items (mean) | {kb:.0f} kB | {mean * 1000:,.0f} ms | |")
        if "closest" in figures:
            count, mean = figures["closest"]
            print(f"| a closest passage asked for (mean of the {count} on the first page) | | "
                  f"{mean * 1000:,.0f} ms | |")


def questions(count: int) -> list[str]:
    import civic_queue

    rows = civic_queue.evidence_rows(DATA)
    pairs = list(dict.fromkeys((r["molecular_profile"], r["disease"]) for r in rows if r.get("disease")))
    forms = ["Is {} associated with {}?", "What is known about {} in {}?", "Does {} predict response in {}?",
             "Is {} a marker of {}?", "What evidence links {} to {}?"]
    picked = [form.format(*pair) for form in forms for pair in pairs]  # 156 pairs: 780 distinct questions
    if count > len(picked):
        raise SystemExit(f"only {len(picked)} distinct questions; ask for fewer (--asks x --rounds)")
    return picked[:count]


def scenario_asks(args: argparse.Namespace) -> None:
    """Questions sent at once while an admin opens the queue page every 0.1 s: the queue page's latency
    idle and meanwhile, and how the questions were answered (200) or refused (429). ``--askers`` reviewers
    (default one) send ``--asks`` questions between them, ``--rounds`` times (the busy page's samples
    pooled over the rounds: one round samples it only 5-25 times); ``--markdown`` runs one reviewer and
    then 16 and ends with docs/web.md's table (its region ``web-asks``)."""
    index = args.workdir / "index"
    if not index.exists():
        from bioevidence.librarian.index import build_index

        build_index([SNAPSHOTS], index)
    senders = [1, 16] if args.markdown else [args.askers]
    queue = small_queue(args.workdir, args.records, accounts=max(2, max(senders) + 1))
    process, url, _ = start(queue, args.workdir / "serve.log", "--index", str(index))
    asked = questions(args.asks * args.rounds * len(senders))  # no question twice: none answered from a cache
    rows: list[tuple[int, list[float], list[collections.Counter[int]], list[float]]] = []
    retried: list[str] = []

    async def burst(askers: list[Reviewer], admin: Reviewer, busy: list[float],
                    batch: list[str]) -> tuple[float, collections.Counter[int]]:
        statuses: list[int] = []

        async def ask(n: int, q: str) -> None:
            import httpx

            try:
                response = await askers[n % len(askers)]._call("queue page", "GET", f"/ask/stream?q={q}")
            except (httpx.ReadError, httpx.RemoteProtocolError):
                # A kept-alive connection the server closed (uvicorn: after 5 s idle) as it was reused: a
                # browser sends such a GET again, and so does this client, once.
                retried.append(q)
                response = await askers[n % len(askers)]._call("queue page", "GET", f"/ask/stream?q={q}")
            answered = response.status_code == 200 and "event: result" in response.text
            # 0: a 200 stream that ended without a result (an answer that failed), never counted as answered
            statuses.append(200 if answered else 0 if response.status_code == 200 else response.status_code)

        t0 = time.perf_counter()
        asks = asyncio.gather(*(ask(n, q) for n, q in enumerate(batch)))
        while not asks.done():
            busy += [t for t, _, _ in await _timed(admin, "/queue", 1)]
            await asyncio.sleep(0.1)
        await asks
        return time.perf_counter() - t0, collections.Counter(statuses)

    async def go() -> list[float]:
        admin = Reviewer(1, url, random.Random(2))
        clients = [admin]
        try:
            assert await admin.sign_in()
            idle = [t for t, _, _ in await _timed(admin, "/queue", 20 * args.rounds, pause=0.1)]
            for count in senders:
                askers = [Reviewer(n if n == 0 else n + 1, url, random.Random(n), connections=args.asks + 2)
                          for n in range(count)]
                clients += askers
                for who in askers:
                    assert await who.sign_in()
                busy: list[float] = []
                bursts = []
                for _ in range(args.rounds):
                    batch, asked[:args.asks] = asked[:args.asks], []
                    bursts.append(await burst(askers, admin, busy, batch))
                walls, counts = [w for w, _ in bursts], [c for _, c in bursts]
                rows.append((count, busy, counts, walls))
                print(f"queue page with {args.asks} questions from {count} reviewer(s), {args.rounds} rounds: "
                      f"p50 {_pct(busy, 0.5):.0f} ms, p95 {_pct(busy, 0.95):.0f} ms, max {max(busy) * 1000:.0f} ms "
                      f"({len(busy)} requests; rounds of {', '.join(f'{w:.1f}' for w in walls)} s); questions: "
                      f"{[dict(c) for c in counts]} (status: count, each round; 200 = answered, "
                      f"0 = a stream without a result)")
            return idle
        finally:
            for who in clients:
                await who.http.aclose()

    try:
        idle = asyncio.run(go())
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
    print(f"queue page idle: p50 {_pct(idle, 0.5):.0f} ms, p95 {_pct(idle, 0.95):.0f} ms, "
          f"max {max(idle) * 1000:.0f} ms ({len(idle)} requests)")
    print(f"questions sent again on a fresh connection (the server had closed the kept-alive one): {len(retried)}")
    if args.markdown:  # docs/web.md's table (its region web-asks)
        print(f"\n| | queue page p50 | p95 | questions (each of {args.rounds} rounds, median) |")
        print("|---|---:|---:|---|")
        print(f"| idle ({len(idle)} requests) | {_pct(idle, 0.5):.0f} ms | {_pct(idle, 0.95):.0f} ms | |")
        for count, busy, counts, walls in rows:
            who = "one reviewer" if count == 1 else f"{count} reviewers"
            answered = statistics.median_low([c[200] for c in counts])
            refused = statistics.median_low([c[429] for c in counts])
            other = sum(v for c in counts for k, v in c.items() if k not in (200, 429))
            print(f"| {args.asks} questions at once from {who} ({len(busy)} requests) | {_pct(busy, 0.5):.0f} ms | "
                  f"{_pct(busy, 0.95):.0f} ms | {answered} answered in {statistics.median(walls):.1f} s, "
                  f"{refused} refused at once (429){f', {other} failed' if other else ''} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--decisions", type=int, default=20, help="decisions per reviewer")
    parser.add_argument("--resend", type=float, default=0.05, help="share of forms sent twice")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--deadline", type=float, default=900)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/bioevidence-bench-web"))
    parser.add_argument("--scenario", choices=["load", "curator", "long", "asks"], default="load",
                        help="load: many reviewers at once (above); curator: one curator in chromium, page loads "
                             "per entry; long: a record with --items evidence items; asks: --asks questions at once")
    parser.add_argument("--entries", type=int, default=50, help="curator: entries to decide")
    parser.add_argument("--items", type=int, default=300, help="long: evidence items in the record")
    parser.add_argument("--repeat", type=int, default=5, help="long: warm requests timed")
    parser.add_argument("--starts", type=int, default=3, help="long: fresh servers timed for the first view")
    parser.add_argument("--asks", type=int, default=48, help="asks: questions sent at once")
    parser.add_argument("--askers", type=int, default=1, help="asks: the reviewers sending them (in turn)")
    parser.add_argument("--rounds", type=int, default=8, help="asks: bursts of --asks questions, one after another")
    parser.add_argument("--markdown", action="store_true", help="end with docs/web.md's table of the scenario")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    if args.scenario != "load":
        if args.records == 10_000:
            args.records = 64  # a real queue of 64 CIViC records, as in issue 27
        {"curator": scenario_curator, "long": scenario_long, "asks": scenario_asks}[args.scenario](args)
        return
    pristine = build(args.workdir, args.records, args.reviewers)
    queue = args.workdir / "run.sqlite"
    for suffix in ("", "-wal", "-shm", ".session-secret"):
        Path(str(queue) + suffix).unlink(missing_ok=True)
    queue.write_bytes(pristine.read_bytes())
    process, url, cold = start(queue, args.workdir / "serve.log")
    try:
        t0 = time.perf_counter()
        crowd = asyncio.run(load(url, args.reviewers, args.decisions, args.resend, args.records, args.seed,
                                 args.deadline))
        wall = time.perf_counter() - t0
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
    errors = [e for r in crowd for e in r.errors]
    problems = check(queue, crowd)
    confirmed = sum(len(r.confirmed) for r in crowd)
    print(f"serve cold start (process start to first answer, {args.records} entries verified): {cold:.2f} s")
    print(f"{args.reviewers} reviewers, {confirmed} decisions confirmed, {sum(r.resent for r in crowd)} forms "
          f"re-sent, in {wall:.1f} s ({confirmed / wall:.1f} decisions/s)")
    print(f"{'request':<12} {'count':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    everything: list[float] = []
    for kind in ("sign-in", "queue page", "record page", "decide"):
        values = [v for r in crowd for v in r.latency[kind]]
        everything += values
        if values:
            print(f"{kind:<12} {len(values):>6} {_pct(values, 0.5):>8.1f} {_pct(values, 0.95):>8.1f} "
                  f"{max(values) * 1000:>8.1f}")
    print(f"{'all':<12} {len(everything):>6} {_pct(everything, 0.5):>8.1f} {_pct(everything, 0.95):>8.1f} "
          f"{statistics.fmean(everything) * 1000:>8.1f} (mean)")
    size, dists = extra_size()
    print(f"web extra: {size:.1f} MB on disk beyond the core install ({', '.join(dists)})")
    if errors or problems:
        for line in [*errors, *problems][:20]:
            print("PROBLEM:", line)
        raise SystemExit(1)
    print("no decision lost or duplicated; review verify: ok")
    if args.markdown:
        print_tables(args, crowd, cold, wall, confirmed)


_KINDS = {"sign-in": "sign-in (page + form, all {n} at once at the start)",
          "queue page": "queue page (a page of 50 of the open entries)",
          "record page": "record page (with every quote in its passage)",
          "decide": "decide (validated again, appended, chained)"}


def print_tables(args: argparse.Namespace, crowd: list[Reviewer], cold: float, wall: float, confirmed: int) -> None:
    """docs/web.md's two tables of the load run: latency per kind of request (no maximum: one request's
    wait moves by several times from run to run, too much for a figure checked within 25%), and the run."""
    print("\n| request | count | p50 | p95 |\n|---|---:|---:|---:|")
    everything: list[float] = []
    for kind, label in _KINDS.items():
        values = [v for r in crowd for v in r.latency[kind]]
        everything += values
        print(f"| {label.format(n=args.reviewers)} | {len(values):,} | {_pct(values, 0.5):,.0f} ms | "
              f"{_pct(values, 0.95):,.0f} ms |")
    print(f"| all | {len(everything):,} | {_pct(everything, 0.5):,.0f} ms | {_pct(everything, 0.95):,.0f} ms |")
    print("\n| run | measured |\n|---|---|")
    print(f"| decisions confirmed by {args.reviewers} reviewers ({sum(r.resent for r in crowd)} forms sent twice, "
          f"none doubled) | {confirmed:,} in {wall:.1f} s: {confirmed / wall:.0f} decisions/s |")
    print(f"| `serve` cold start on the {args.records:,}-entry queue (process start to first answer) | {cold:.1f} s |")


if __name__ == "__main__":
    main()
