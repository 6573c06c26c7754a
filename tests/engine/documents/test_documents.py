"""Documents through the vault: parser plugins, the document → section → span tree, replacement, deletion,
forgetting, the privacy firewall, and collections.

Every test opens a real vault in a temp folder with the app's built-in parser plugins; files are parsed in real
sandbox worker processes.  ``start_workers=False`` keeps the distillation job queued, which is how a test sees a
document in its ``processing`` state; the tests that need distillations open the vault with its workers and wait.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from engine.errors import Conflict, NotFound, UnsupportedFile, ValidationError
from engine.forget import ForgetScope
from engine.plugin_api import ParsedDocument, ParseLimits
from engine.privacy import apply as firewall_apply
from engine.vault import Vault
from plugins.parsers.markdown import MarkdownParser
from plugins.parsers.pdf import PdfParser
from tests.engine.documents.plugin_parsers import RecipeParser, TestParsers
from tests.engine.documents.support import (
    distill_jobs,
    embedded,
    finds,
    fts_hits,
    ids_of,
    objects,
    open_vault,
    recall,
    span_blocks,
    vec_rows,
)
from tests.engine.watch_support import wait_until
from tests.fakes.ollama import FakeOllama
from tests.plugins import parser_pdf as pdfs

pytestmark = pytest.mark.timeout(120)

LIMITS = ParseLimits()

INSTALL_BODY = " ".join(
    f"Step {n}: unpack the archive into a fresh folder and check that the quokkaberry tool answers its "
    f"version probe before moving on."
    for n in range(1, 16)
)
README = f"""# Widget Handbook

The widget keeps a ledger of every marmalade shipment and warns before a cellar runs low.

## Installation

{INSTALL_BODY}

## Usage

Open the dashboard each morning; the lighthouse view shows the shipments that are late.
"""

PII_NOTE = """# Contact zed.quillfeather@example.org

Write to zed.quillfeather@example.org with the order number. The card on file is 4111 1111 1111 1111 and
expires soon. The parcel contains periwinkle fabric.
"""


def md(name: str = "README.md", text: str = README) -> tuple[str, bytes]:
    return name, text.encode("utf-8")


def parse_md(data: bytes, name: str = "README.md") -> ParsedDocument:
    """The same parse the sandbox runs, in process: the document text that span offsets index."""
    return MarkdownParser().parse(data, name=name, limits=LIMITS)


def three_page_pdf() -> bytes:
    return pdfs.text_pdf(
        [
            ["Survey of the northern orchard", "The apple rows were counted in spring."],
            ["Pests", "A weevil called the tamarisk borer damaged the pear trees."],
            ["Harvest", "The harvest filled forty crates of plums by autumn."],
        ]
    )


# -- parsers are plugins ------------------------------------------------------------------------------------------
def test_a_vault_with_the_builtin_plugins_lists_their_parsers(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        parsers = {p.name: p for p in vault.documents.parsers()}
        assert {"markdown", "pdf", "text", "html"} <= set(parsers)
        assert vault.documents.parser_for("Notes.MD").name == "markdown"
        assert vault.documents.parser_for("report.pdf").name == "pdf"
        assert vault.documents.parser_for("page.htm").name == "html"
        assert vault.documents.parser_for("server.log").name == "text"
        assert vault.documents.parser_for("no-extension", "application/pdf").name == "pdf"


def test_a_vault_without_parser_plugins_has_no_parsers(vault: Vault) -> None:
    assert vault.documents.parsers() == []
    with pytest.raises(UnsupportedFile) as raised:
        vault.documents.upload(name="README.md", text="# Hello")
    assert "no parser plugins" in raised.value.fix
    assert vault.documents() == []


def test_an_unknown_type_is_a_clear_unsupported_file_error(tmp_path: Path) -> None:
    model = tmp_path / "scene.blend"
    model.write_bytes(b"BLENDER-v300" + bytes(64))
    with open_vault(tmp_path / "v") as vault:
        with pytest.raises(UnsupportedFile) as raised:
            vault.documents.upload(path=model)
        assert "'scene.blend'" in raised.value.message
        for kind in (".md", ".pdf", ".txt", ".html"):
            assert kind in raised.value.fix
        with pytest.raises(UnsupportedFile):
            vault.documents.upload(name="data.parquet", data=b"PAR1")
        assert vault.documents() == [] and vault.documents.quarantine() == []


def test_a_third_party_parser_registered_through_the_hook_is_used(tmp_path: Path) -> None:
    recipe = (
        "Title: Lemon tart\n== Ingredients\nLemons, butter, sugar and a pinch of grains of paradise.\n"
        "== Method\nBake the crust blind, then fill it with the curd.\n"
    )
    with open_vault(tmp_path / "v", plugins=[TestParsers(RecipeParser())]) as vault:
        assert vault.documents.parser_for("tart.recipe").name == "recipe"
        assert vault.documents.parser_for("tart", "application/x-recipe").name == "recipe"
        result = vault.documents.upload(name="tart.recipe", text=recipe)
        tree = vault.documents.get(result.document_id)
        assert (tree.info.parser, tree.info.parser_version) == ("recipe", "3")
        assert tree.info.metadata["title"] == "Lemon tart" and tree.info.metadata["format"] == "recipe"
        assert [s.title for s in tree.sections] == ["Ingredients", "Method"]
        assert finds(vault, "paradise")


# -- the tree -----------------------------------------------------------------------------------------------------
def test_upload_from_a_path_from_bytes_and_from_text(tmp_path: Path) -> None:
    note = tmp_path / "notes" / "README.md"
    note.parent.mkdir()
    note.write_text(README, encoding="utf-8")
    with open_vault(tmp_path / "v") as vault:
        from_path = vault.documents.upload(path=note)
        from_bytes = vault.documents.upload(name="orchard.pdf", data=three_page_pdf())
        from_text = vault.documents.upload(name="todo.txt", text="Buy twine for the espalier pears.")
        assert [r.status for r in (from_path, from_bytes, from_text)] == ["processing"] * 3
        info = vault.documents.get(from_path.document_id).info
        assert (info.name, info.path, info.parser) == ("README.md", str(note.resolve()), "markdown")
        assert info.content_hash == hashlib.sha256(note.read_bytes()).hexdigest()
        assert info.size_bytes == note.stat().st_size
        pdf = vault.documents.get(from_bytes.document_id).info
        assert (pdf.name, pdf.path, pdf.parser, pdf.page_count) == ("orchard.pdf", None, "pdf", 3)
        text = vault.documents.get(from_text.document_id).info
        assert (text.parser, text.spans) == ("text", 1)
        listed = {d.id for d in vault.documents()}
        assert listed == {from_path.document_id, from_bytes.document_id, from_text.document_id}
        with pytest.raises(ValidationError):
            vault.documents.upload(name="x.md", text="a", data=b"b")
        with pytest.raises(ValidationError):
            vault.documents.upload(path=tmp_path / "missing.md")
        with pytest.raises(ValidationError):
            vault.documents.upload(text="no name to pick a parser by")


def test_sections_and_spans_carry_exact_character_offsets(tmp_path: Path) -> None:
    name, data = md()
    text = parse_md(data).text
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(name=name, data=data)
        tree = vault.documents.get(result.document_id)
    assert [s.title for s in tree.sections] == ["Widget Handbook", "Installation", "Usage"]
    assert result.sections == 3 and result.spans == sum(len(s.spans) for s in tree.sections)
    install = tree.sections[1]
    assert len(install.spans) >= 2, "a long section is cut into several spans"
    ordinals = [span.ordinal for s in tree.sections for span in s.spans]
    assert ordinals == list(range(len(ordinals)))
    for section in tree.sections:
        assert text[section.start_char : section.end_char].startswith(section.title)
        for span in section.spans:
            assert section.start_char <= span.start_char < span.end_char <= section.end_char
            assert span.text == text[span.start_char : span.end_char]
            assert span.page_start is None and span.page_end is None
    # consecutive spans of a section overlap a little, so a sentence cut at one end is whole in the next
    for first, second in zip(install.spans, install.spans[1:], strict=False):
        assert second.start_char < first.end_char
    covered = "".join(text[s.start_char : s.end_char] for s in install.spans)
    assert "Step 15" in covered and "Step 1:" in covered


def test_pdf_spans_know_their_pages(tmp_path: Path) -> None:
    data = three_page_pdf()
    parsed = PdfParser().parse(data, name="orchard.pdf", limits=LIMITS)
    with open_vault(tmp_path / "v") as vault:
        result = vault.documents.upload(name="orchard.pdf", data=data)
        tree = vault.documents.get(result.document_id)
    spans = [span for section in tree.sections for span in section.spans]
    pages_of = {
        word: {(s.page_start, s.page_end) for s in spans if word in s.text} for word in ("apple", "tamarisk", "plums")
    }
    assert pages_of == {"apple": {(1, 1)}, "tamarisk": {(2, 2)}, "plums": {(3, 3)}}
    for span in spans:
        assert span.text == parsed.text[span.start_char : span.end_char]
        page = next(p for p in parsed.pages if p.number == span.page_start)
        assert page.start_char <= span.start_char <= page.end_char
    for section in tree.sections:
        assert section.page_start is not None and section.page_start <= section.page_end


def test_spans_are_searchable_when_upload_returns_before_any_job_runs(tmp_path: Path) -> None:
    name, data = md()
    with open_vault(tmp_path / "v", start_workers=False) as vault:
        result = vault.documents.upload(name=name, data=data)
        assert result.status == "processing"
        spans = ids_of(vault, "spans", result.document_id)
        sections = ids_of(vault, "sections", result.document_id)
        assert embedded(vault, spans) == dict.fromkeys(spans, "span")
        assert vec_rows(vault, spans) == set(spans)
        assert embedded(vault, [*sections, result.document_id]) == {}, "distillations are not made yet"
        install = vault.documents.get(result.document_id).sections[1]
        assert set(fts_hits(vault, "quokkaberry")) == {s.id for s in install.spans}
        hits = span_blocks(recall(vault, "quokkaberry"))
        assert hits and "quokkaberry" in hits[0].content
        assert hits[0].meta["document_id"] == result.document_id
        assert hits[0].meta["section"] == "Installation"
        assert distill_jobs(vault, result.document_id) == 1
        assert vault.documents.get(result.document_id).info.status == "processing"
        assert all(s.distillation is None for s in vault.documents.get(result.document_id).sections)


def test_distillations_arrive_in_the_background_and_the_document_becomes_ready(tmp_path: Path) -> None:
    name, data = md()
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        result = vault.documents.upload(name=name, data=data)
        assert vault.jobs.wait_idle(120)
        tree = vault.documents.get(result.document_id)
        assert tree.info.status == "ready" and tree.info.status_reason is None
        assert tree.info.distillation and "marmalade" in tree.info.distillation
        assert all(s.distillation for s in tree.sections)
        assert "quokkaberry" in tree.sections[1].distillation
        assert "lighthouse" in tree.sections[2].distillation
        kinds = embedded(vault, [result.document_id, *(s.id for s in tree.sections)])
        assert kinds == {result.document_id: "document", **{s.id: "section" for s in tree.sections}}
        assert distill_jobs(vault, result.document_id) == 0


def test_re_uploading_a_document_id_replaces_tree_vectors_and_distillations(tmp_path: Path) -> None:
    name, data = md()
    new_text = README.replace("quokkaberry", "zanzibarite").replace("marmalade", "saltpetre")
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        first = vault.documents.upload(name=name, data=data)
        assert vault.jobs.wait_idle(120)
        old_spans = ids_of(vault, "spans", first.document_id)
        old_sections = ids_of(vault, "sections", first.document_id)
        old_vector = np.array(vault.embedder.embed(["quokkaberry"])[0])
        assert fts_hits(vault, "quokkaberry")
        assert vec_rows(vault, [first.document_id, *old_spans, *old_sections]) == {
            first.document_id,
            *old_spans,
            *old_sections,
        }
    # reopened without workers: the replaced tree is seen before it is distilled again
    with open_vault(tmp_path / "v", start_workers=False) as vault:
        again = vault.documents.upload(name=name, text=new_text, document_id=first.document_id)
        assert (again.document_id, again.status) == (first.document_id, "processing")
        tree = vault.documents.get(first.document_id)
        new_spans = ids_of(vault, "spans", first.document_id)
        assert not set(new_spans) & set(old_spans)
        assert not {s.id for s in tree.sections} & set(old_sections)
        assert objects(vault, [*old_spans, *old_sections]) == set()
        assert fts_hits(vault, "quokkaberry") == [] and fts_hits(vault, "zanzibarite")
        assert embedded(vault, [first.document_id, *old_spans, *old_sections]) == {}
        assert vec_rows(vault, [first.document_id, *old_spans, *old_sections]) == set()
        assert vec_rows(vault, new_spans) == set(new_spans)
        hits = vault.vectors.search(old_vector, 50, kinds=["span", "section", "document"])
        assert not {h.object_id for h in hits} & {first.document_id, *old_spans, *old_sections}
        assert tree.info.distillation is None and all(s.distillation is None for s in tree.sections)
        assert tree.info.status == "processing"
        assert not finds(vault, "quokkaberry") and finds(vault, "zanzibarite")
        assert len(vault.documents()) == 1
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        assert vault.jobs.wait_idle(120)
        info = vault.documents.get(first.document_id).info
        assert info.status == "ready" and "saltpetre" in info.distillation
        assert "marmalade" not in info.distillation


def test_an_unchanged_file_is_a_no_op(tmp_path: Path) -> None:
    note = tmp_path / "README.md"
    note.write_text(README, encoding="utf-8")
    with open_vault(tmp_path / "v") as vault:
        first = vault.documents.upload(path=note)
        spans = ids_of(vault, "spans", first.document_id)
        jobs = vault.jobs.queue_depth()
        again = vault.documents.upload(path=note)
        assert (again.document_id, again.status) == (first.document_id, "unchanged")
        assert ids_of(vault, "spans", first.document_id) == spans
        by_id = vault.documents.upload(name="README.md", data=note.read_bytes(), document_id=first.document_id)
        assert by_id.status == "unchanged" and ids_of(vault, "spans", first.document_id) == spans
        assert vault.jobs.queue_depth() == jobs
        note.write_text(README + "\nA new closing line about the abacus.\n", encoding="utf-8")
        changed = vault.documents.upload(path=note)
        assert (changed.document_id, changed.status) == (first.document_id, "processing")
        assert not set(ids_of(vault, "spans", first.document_id)) & set(spans)
        assert len(vault.documents()) == 1


def _ready_document_in_a_collection(vault: Vault) -> tuple[int, int, list[int], list[int]]:
    name, data = md()
    wait_until(lambda: vault.vectors.mirror.loaded, 10)
    result = vault.documents.upload(name=name, data=data)
    keep = vault.documents.upload(name="other.md", text="# Other\n\nThe quokkaberry is mentioned here too.")
    collection = vault.collections.create("Manuals")
    vault.collections.add(collection.id, [result.document_id, keep.document_id])
    assert vault.jobs.wait_idle(120)
    assert vault.documents.get(result.document_id).info.status == "ready"
    return (
        result.document_id,
        collection.id,
        ids_of(vault, "spans", result.document_id),
        ids_of(vault, "sections", result.document_id),
    )


def _assert_document_gone(vault: Vault, doc: int, collection: int, spans: list[int], sections: list[int]) -> None:
    every = [doc, *spans, *sections]
    with pytest.raises(NotFound):
        vault.documents.get(doc)
    assert ids_of(vault, "spans", doc) == [] and ids_of(vault, "sections", doc) == []
    assert objects(vault, every) == set()
    assert embedded(vault, every) == {} and vec_rows(vault, every) == set()
    assert vault.vectors.mirror.loaded, "searches below go through the in-memory mirror"
    probe = vault.embedder.embed(["marmalade quokkaberry installation archive widget"])[0]
    assert not {h.object_id for h in vault.vectors.search(probe, 200)} & set(every)
    assert not set(fts_hits(vault, "marmalade")) and not set(fts_hits(vault, "quokkaberry")) & set(spans)
    assert vault.collections.document_ids(collection) != [] and doc not in vault.collections.document_ids(collection)
    assert vault.collections.get(collection).documents == 1
    assert distill_jobs(vault, doc) == 0
    assert not vault.store.query("SELECT 1 FROM sections WHERE distillation LIKE '%marmalade%'")


def test_delete_removes_the_tree_vectors_fts_distillations_and_memberships(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        doc, collection, spans, sections = _ready_document_in_a_collection(vault)
        assert vault.documents.delete(doc) == doc
        _assert_document_gone(vault, doc, collection, spans, sections)
        assert finds(vault, "quokkaberry"), "the other document stays"
        with pytest.raises(NotFound):
            vault.documents.delete(doc)


def test_delete_while_processing_drops_the_queued_distillation(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", start_workers=False) as vault:
        result = vault.documents.upload(name="README.md", text=README)
        assert distill_jobs(vault, result.document_id) == 1
        vault.documents.delete(result.document_id)
        assert distill_jobs(vault, result.document_id) == 0 and vault.jobs.queue_depth() == 0


def test_forget_a_document_removes_everything_and_counts_it(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        doc, collection, spans, sections = _ready_document_in_a_collection(vault)
        dry = vault.forget(ForgetScope(document_id=doc, dry_run=True))
        assert vault.documents.get(doc).info.spans == len(spans)
        receipt = vault.forget(ForgetScope(document_id=doc))
        expected = {
            "documents": 1,
            "sections": len(sections),
            "chunks": len(spans),
            "embeddings": 1 + len(sections) + len(spans),
            "events": 0,
            "facts": 0,
            "jobs": 0,
        }
        assert {k: receipt.deleted_counts[k] for k in expected} == expected
        assert dry.deleted_counts == receipt.deleted_counts and dry.dry_run and not receipt.dry_run
        assert vault.receipt(receipt.receipt_id).deleted_counts == receipt.deleted_counts
        assert receipt.scope["document_id"] == doc
        _assert_document_gone(vault, doc, collection, spans, sections)
        assert finds(vault, "quokkaberry"), "the other document stays"
        with pytest.raises(NotFound):
            vault.forget(ForgetScope(document_id=doc))


def test_pii_is_masked_in_spans_and_never_embedded_or_indexed(tmp_path: Path) -> None:
    data = PII_NOTE.encode()
    text = parse_md(data, "contact.md").text
    with open_vault(tmp_path / "v", start_workers=True) as vault:
        result = vault.documents.upload(name="contact.md", data=data)
        assert vault.jobs.wait_idle(120)
        tree = vault.documents.get(result.document_id)
        spans = [span for section in tree.sections for span in section.spans]
        for span in spans:
            original = text[span.start_char : span.end_char]
            assert span.text == firewall_apply(original, vault.settings.privacy).text
            assert "quillfeather" not in span.text and "4111" not in span.text
        joined = " ".join(s.text for s in spans)
        assert "[EMAIL]" in joined and "[CARD]" in joined and "periwinkle" in joined
        for word in ("quillfeather", "4111", "1111", "example"):
            assert fts_hits(vault, word) == [], word
        assert fts_hits(vault, "periwinkle")
        # the stored vectors are the masked texts' vectors, not the originals'
        for span in spans:
            stored = np.frombuffer(
                vault.store.scalar(f"SELECT embedding FROM {vault.vectors.table} WHERE rowid = ?", (span.id,)),
                dtype=np.float32,
            )
            masked = vault.embedder.embed([span.text])[0]
            raw = vault.embedder.embed([text[span.start_char : span.end_char]])[0]
            assert np.allclose(stored, masked) and not np.allclose(stored, raw)
        # headings, titles and distillations are stored text as well
        stored_text = [s.title for s in tree.sections] + [s.distillation or "" for s in tree.sections]
        stored_text += [tree.info.distillation or "", str(tree.info.metadata)]
        assert not any("quillfeather" in t or "4111 1111" in t for t in stored_text), stored_text
        assert tree.sections[0].title == "Contact [EMAIL]"
        assert not any("quillfeather" in b.content for b in recall(vault, "quillfeather").documents)


def test_the_model_writing_distillations_never_sees_pii(tmp_path: Path, fake_ollama: FakeOllama) -> None:
    fake_ollama.on_chat(lambda request: {"summary": "How to reach the sender, and what the parcel holds."})
    settings = fake_ollama.settings({"llm.provider": "ollama", "embedder.provider": "hashing"})
    with open_vault(tmp_path / "v", start_workers=True, settings=settings) as vault:
        result = vault.documents.upload(name="contact.md", text=PII_NOTE)
        assert vault.jobs.wait_idle(120)
        tree = vault.documents.get(result.document_id)
        assert tree.info.status == "ready"
        assert {s.distillation for s in tree.sections} == {"How to reach the sender, and what the parcel holds."}
    prompts = [r for r in fake_ollama.requests if r.path in ("/api/chat", "/api/generate")]
    assert prompts, "the sections were distilled by the model"
    sent = " ".join(fake_ollama.texts_sent())
    assert "periwinkle" in sent and "[EMAIL]" in sent
    assert "quillfeather" not in sent and "4111" not in sent


def test_front_matter_and_title_metadata_are_masked(tmp_path: Path) -> None:
    note = (
        "---\ntitle: Notes for zed.quillfeather@example.org\nauthor: zed.quillfeather@example.org\n---\n"
        "# Plain heading\n\nNothing personal in the body about the greenhouse.\n"
    )
    with open_vault(tmp_path / "v") as vault:
        info = vault.documents.get(vault.documents.upload(name="n.md", text=note).document_id).info
    assert info.metadata["author"] == "[EMAIL]"
    assert info.metadata["title"] == "Notes for [EMAIL]"


# -- collections --------------------------------------------------------------------------------------------------
def test_collections_create_rename_list_add_remove_and_delete(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        a = vault.documents.upload(name="a.md", text="# A\n\nAbout apricots.").document_id
        b = vault.documents.upload(name="b.md", text="# B\n\nAbout bilberries.").document_id
        recipes = vault.collections.create("Recipes", description="kitchen notes")
        garden = vault.collections.create("garden")
        assert [c.name for c in vault.collections()] == ["garden", "Recipes"]
        assert (recipes.description, recipes.documents) == ("kitchen notes", 0)
        assert vault.collections.add(recipes.id, [a, b]).documents == 2
        assert vault.collections.add(recipes.id, [a]).documents == 2, "adding a member again is fine"
        assert set(vault.collections.document_ids(recipes.id)) == {a, b}
        assert {d.id for d in vault.documents(collection_id=recipes.id)} == {a, b}
        assert vault.documents.get(a).info.collection_ids == (recipes.id,)
        assert vault.collections.remove(recipes.id, [b]).documents == 1
        assert vault.collections.document_ids(recipes.id) == [a]
        renamed = vault.collections.rename(recipes.id, "  Family   recipes ")
        assert renamed.name == "Family recipes" and vault.collections.get(recipes.id).name == "Family recipes"
        c = vault.documents.upload(name="c.md", text="# C\n\nAbout cloudberries.", collection_id=garden.id)
        assert vault.collections.document_ids(garden.id) == [c.document_id]
        vault.collections.delete(recipes.id)
        assert [x.id for x in vault.collections()] == [garden.id]
        with pytest.raises(NotFound):
            vault.collections.get(recipes.id)
        assert {d.id for d in vault.documents()} == {a, b, c.document_id}, "documents stay"
        assert vault.documents.get(a).info.collection_ids == ()
        with pytest.raises(NotFound):
            vault.collections.add(recipes.id, [a])
        with pytest.raises(NotFound):
            vault.collections.add(garden.id, [999_999])
        with pytest.raises(ValidationError):
            vault.collections.add(garden.id, [])
        with pytest.raises(ValidationError):
            vault.collections.create("   ")


def test_duplicate_collection_names_are_refused(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        first = vault.collections.create("Reading list")
        with pytest.raises(Conflict):
            vault.collections.create("reading LIST")
        other = vault.collections.create("Archive")
        with pytest.raises(Conflict):
            vault.collections.rename(other.id, "Reading List")
        assert vault.collections.rename(first.id, "READING LIST").name == "READING LIST"
        assert sorted(c.name for c in vault.collections()) == ["Archive", "READING LIST"]
        assert vault.collections.create("Reading list", user_id="bob").user_id == "bob"


def test_collections_never_cross_users(tmp_path: Path) -> None:
    with open_vault(tmp_path / "v") as vault:
        mine = vault.documents.upload(name="mine.md", text="# Mine\n\nAlice's notes on larches.").document_id
        theirs = vault.documents.upload(
            name="theirs.md", text="# Theirs\n\nBob's notes on firs.", user_id="bob"
        ).document_id
        alice = vault.collections.create("Trees")
        bob = vault.collections.create("Trees", user_id="bob")
        with pytest.raises(ValidationError, match="another user"):
            vault.collections.add(alice.id, [theirs])
        with pytest.raises(ValidationError, match="another user"):
            vault.collections.add(bob.id, [mine])
        with pytest.raises(NotFound):
            vault.documents.upload(name="x.md", text="# X\n\nx", collection_id=bob.id)
        assert vault.collections.document_ids(alice.id) == [] and vault.collections.document_ids(bob.id) == []
        assert [c.id for c in vault.collections(user_id="bob")] == [bob.id]
        assert [d.id for d in vault.documents(user_id="bob")] == [theirs]
        with pytest.raises(NotFound):
            vault.documents.upload(name="mine.md", text="# Replaced", document_id=mine, user_id="bob")
