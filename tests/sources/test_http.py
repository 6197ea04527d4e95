"""The HTTP layer over a real loopback socket: each fault ends in a retried success or one clear error."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from bioevidence.errors import RetrievalError
from bioevidence.io import parse_json
from bioevidence.sources.http import HostLimit, HttpClient, HttpConfig, parse_retry_after, translate_error
from bioevidence.sources.xmlsafe import parse_xml
from loopback import Fault, LoopbackServer, RecordingSleep, Reply

JSON = ("application/json",)
XML = ("text/xml", "application/xml")
MakeClient = Callable[..., HttpClient]


@pytest.fixture
def search_page(shared_data: Path) -> bytes:
    return (shared_data / "api_responses" / "europepmc" / "search_cancer.json").read_bytes()


def test_plain_get_returns_recorded_bytes(server: LoopbackServer, make_client: MakeClient, search_page: bytes) -> None:
    server.route("/search", search_page, content_type="application/json")
    response = make_client().get(f"{server.url}/search", {"query": "cancer"}, accept=JSON)
    assert response.status == 200 and response.content == search_page and response.attempts == 1


def test_user_agent_names_contact_email(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/ua", b"{}", content_type="application/json")
    make_client().get(f"{server.url}/ua", accept=JSON)
    assert "mailto:tests@example.org" in server.headers[-1]["user-agent"]


def test_429_with_retry_after_is_honoured_then_succeeds(
    server: LoopbackServer, make_client: MakeClient, sleeps: RecordingSleep, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.http(429, retry_after="3"))
    response = make_client().get(f"{server.url}/search", accept=JSON)
    assert response.attempts == 2 and sleeps.waits == [3.0]


def test_burst_of_5xx_is_retried_with_growing_backoff(
    server: LoopbackServer, make_client: MakeClient, sleeps: RecordingSleep, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.http(500), Fault.http(503), Fault.http(503))
    response = make_client().get(f"{server.url}/search", accept=JSON)
    assert response.attempts == 4 and server.hits("/search") == 4
    assert sleeps.waits == sorted(sleeps.waits) and len(sleeps.waits) == 3


def test_attempt_cap_gives_one_clear_error(server: LoopbackServer, make_client: MakeClient, search_page: bytes) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", *[Fault.http(503)] * 10)
    with pytest.raises(RetrievalError) as info:
        make_client().get(f"{server.url}/search", accept=JSON)
    assert info.value.retryable and info.value.status == 503
    assert "gave up after 4 attempts" in info.value.message
    assert server.hits("/search") == 4


def test_retry_after_beyond_the_maximum_gives_up_at_once(
    server: LoopbackServer, make_client: MakeClient, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.http(429, retry_after="3600"))
    with pytest.raises(RetrievalError):
        make_client(retry_after_max=60).get(f"{server.url}/search", accept=JSON)
    assert server.hits("/search") == 1


def test_slow_response_times_out_then_retry_succeeds(
    server: LoopbackServer, make_client: MakeClient, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.slow(0.6))
    response = make_client(read_timeout=0.2).get(f"{server.url}/search", accept=JSON)
    assert response.attempts == 2


def test_slow_every_time_is_one_timeout_error(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/slow", b"{}", content_type="application/json")
    server.fail("/slow", *[Fault.slow(0.4)] * 2)
    with pytest.raises(RetrievalError) as info:
        make_client(read_timeout=0.1, max_attempts=2).get(f"{server.url}/slow", accept=JSON)
    assert info.value.context["reason"] == "timeout"


def test_connection_reset_is_retried(server: LoopbackServer, make_client: MakeClient, search_page: bytes) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.reset(), Fault.reset())
    assert make_client().get(f"{server.url}/search", accept=JSON).content == search_page


def test_truncated_body_is_retried_and_never_cached(
    server: LoopbackServer, make_client: MakeClient, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", Fault.truncate(100))
    client = make_client()
    response = client.get(f"{server.url}/search", accept=JSON)
    assert response.attempts == 2 and response.content == search_page
    cached = client.get(f"{server.url}/search", accept=JSON)
    assert cached.from_cache and cached.content == search_page


def test_always_truncated_is_one_error(server: LoopbackServer, make_client: MakeClient, search_page: bytes) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", *[Fault.truncate(50)] * 4)
    client = make_client()
    with pytest.raises(RetrievalError) as info:
        client.get(f"{server.url}/search", accept=JSON)
    assert info.value.context["reason"] == "truncated"
    assert client.cache is not None and not list(client.cache.root.rglob("*.resp"))


def test_wrong_content_type_is_one_error_naming_it(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/search", b"<html>login</html>", content_type="text/html")
    with pytest.raises(RetrievalError) as info:
        make_client().get(f"{server.url}/search", accept=JSON)
    assert "text/html" in info.value.message and server.hits("/search") == 1


def test_body_over_the_cap_is_aborted(server: LoopbackServer, make_client: MakeClient, search_page: bytes) -> None:
    server.route("/search", search_page, content_type="application/json")
    with pytest.raises(RetrievalError) as info:
        make_client(max_bytes=1000).get(f"{server.url}/search", accept=JSON)
    assert info.value.context["reason"] == "too_large"


def test_streamed_body_over_the_cap_without_length_is_aborted(server: LoopbackServer) -> None:
    def chunked(query: dict[str, str]) -> Reply:
        return Reply(200, b"x" * 50000, "application/json", {"Transfer-Encoding": "chunked"})

    server.route("/big", chunked)
    transport = httpx.HTTPTransport()
    config = HttpConfig(max_bytes=4000, max_attempts=1)
    with HttpClient(config, transport=transport) as client, pytest.raises(RetrievalError) as info:
        client.get(f"{server.url}/big")
    assert "grew over" in info.value.message
    with HttpClient(config.with_(max_bytes=60000), transport=httpx.HTTPTransport()) as client:
        assert len(client.get(f"{server.url}/big").content) == 50000


def test_malformed_json_is_one_error_and_not_cached(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/search", b'{"hitCount": 1, "resultList": ', content_type="application/json")
    client = make_client()
    for _ in range(2):
        with pytest.raises(RetrievalError) as info:
            client.get(f"{server.url}/search", accept=JSON, validate=parse_json)
        assert info.value.context["reason"] == "malformed"
    assert server.hits("/search") == 2


def test_real_truncated_einfo4_is_malformed_xml(
    server: LoopbackServer, make_client: MakeClient, shared_data: Path
) -> None:
    server.route("/einfo.fcgi", shared_data / "api_responses" / "eutils" / "einfo4.xml", content_type="text/xml")
    with pytest.raises(RetrievalError) as info:
        make_client().get(f"{server.url}/einfo.fcgi", accept=XML, validate=parse_xml)
    assert "malformed" in info.value.message


def test_404_is_not_retried_and_says_unknown(server: LoopbackServer, make_client: MakeClient) -> None:
    with pytest.raises(RetrievalError) as info:
        make_client().get(f"{server.url}/nothing", accept=JSON)
    assert info.value.status == 404 and not info.value.retryable and server.hits("/nothing") == 1


def test_failed_response_is_not_served_from_cache(
    server: LoopbackServer, make_client: MakeClient, search_page: bytes
) -> None:
    server.route("/search", search_page, content_type="application/json")
    server.fail("/search", *[Fault.http(503)] * 4)
    client = make_client()
    with pytest.raises(RetrievalError):
        client.get(f"{server.url}/search", accept=JSON)
    response = client.get(f"{server.url}/search", accept=JSON)
    assert not response.from_cache and response.content == search_page


def test_cache_key_includes_params_and_refresh_bypasses_reads(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/q", lambda q: json.dumps(q).encode(), content_type="application/json")
    client = make_client()
    a = client.get(f"{server.url}/q", {"id": "1"}, accept=JSON)
    b = client.get(f"{server.url}/q", {"id": "2"}, accept=JSON)
    assert a.content != b.content
    assert client.get(f"{server.url}/q", {"id": "1"}, accept=JSON).from_cache
    assert not client.get(f"{server.url}/q", {"id": "1"}, accept=JSON, use_cache=False).from_cache
    assert server.hits("/q") == 3


def test_rate_limit_spaces_requests(server: LoopbackServer, make_client: MakeClient) -> None:
    server.route("/r", b"{}", content_type="application/json")
    client = HttpClient(
        make_client().config.with_(limits={"eutils": HostLimit(20.0, 2)}, cache_dir=None),
    )
    start = time.monotonic()
    threads = [
        threading.Thread(target=client.get, args=(f"{server.url}/r",), kwargs={"service": "eutils"}) for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    assert time.monotonic() - start >= 5 / 20.0 * 0.9


def test_base_urls_come_from_environment() -> None:
    config = HttpConfig.from_env(
        {
            "BIOEVIDENCE_EUROPEPMC_URL": "http://mirror/epmc/",
            "BIOEVIDENCE_EUTILS_URL": "http://m/e",
            "BIOEVIDENCE_CROSSREF_URL": "http://m/c",
            "NCBI_API_KEY": "k",
        }
    )
    assert config.url("europepmc") == "http://mirror/epmc" and config.url("crossref") == "http://m/c"
    assert config.limit("eutils").rate == 10.0


def test_retry_after_http_date() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", 1445412480.0) == 10.0
    assert parse_retry_after("soon", 0.0) is None


@pytest.mark.parametrize(
    ("exc", "retryable", "reason"),
    [
        (httpx.ConnectTimeout("t"), True, "timeout"),
        (httpx.ReadTimeout("t"), True, "timeout"),
        (httpx.ConnectError("c"), True, "connection"),
        (httpx.ReadError("r"), True, "connection"),
        (httpx.RemoteProtocolError("p"), True, "truncated"),
        (httpx.TooManyRedirects("x"), False, "redirects"),
        (httpx.UnsupportedProtocol("x"), False, "url"),
        (httpx.InvalidURL("x"), False, "url"),
        (httpx.LocalProtocolError("x"), True, "http"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else str(v),
)
def test_every_httpx_error_maps_to_retrieval_error(exc: Exception, retryable: bool, reason: str) -> None:
    mapped = translate_error(exc, "http://x/y")
    assert isinstance(mapped, RetrievalError)
    assert mapped.retryable is retryable and mapped.context["reason"] == reason
