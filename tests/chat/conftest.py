"""Chat fixtures: the OpenAI-compatible test LLM server and a small knowledge base."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chat.models import Conversation
from portal.llm import OpenAICompatibleLLM
from tests.conftest import CORPUS, ingest_folder
from tests.llm_server import LlmTestServer


@pytest.fixture(scope="session")
def _llm_server() -> Iterator[LlmTestServer]:
    with LlmTestServer() as server:
        yield server


@pytest.fixture
def llm_server(_llm_server: LlmTestServer) -> LlmTestServer:
    """The test LLM server, with its recorded requests and scripts cleared for this test."""
    _llm_server.reset()
    _llm_server.default_delay = 0.0
    return _llm_server


@pytest.fixture
def llm(llm_server: LlmTestServer) -> OpenAICompatibleLLM:
    """The portal's real OpenAI client, talking HTTP to the test server."""
    return OpenAICompatibleLLM(
        llm_server.base_url, "kb-test", "", timeout=5, connect_timeout=2, max_tokens=512
    )


@pytest.fixture
def conversation(db, bob) -> Conversation:
    return Conversation.objects.create(user=bob)


SMALL_KB_PAGES = [
    "obshee/verifikaciya-i-validaciya-verification-and-validation.md",
    "obshee/principy-testirovaniya.md",
    "obshee/defekty-i-oshibki.md",
    "obshee/sereznost-i-prioritet-defekta-severity-and-priority.md",
]


def ingest_small_kb(tmp_path) -> None:
    """A few wiki pages and the test programme: enough for page tests, ingested in seconds."""
    import shutil

    folder = tmp_path / "small-wiki"
    for page in SMALL_KB_PAGES:
        target = folder / page
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "wiki_qa_bible_ru" / page, target)
    ingest_folder(folder, "QA Bible", kind="wiki")
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(CORPUS / "specs_hse_app_ru" / "Программа и методика испытаний.docx", specs)
    ingest_folder(specs, "HSE app specifications", kind="specs")
