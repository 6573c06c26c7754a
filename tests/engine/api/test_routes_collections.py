"""``/v6/collections``: create, list, read with document ids, rename, membership, delete."""

from __future__ import annotations

import httpx

from engine import Vault
from tests.engine.api.conftest import assert_error, table_counts


def upload(vault: Vault, name: str) -> int:
    result = vault.documents.upload(name=name, text=f"# {name}\n\nSome text about {name}.")
    assert result.document_id is not None
    return result.document_id


def test_a_collection_is_created_listed_renamed_and_deleted(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    created = client.post("/v6/collections", json={"name": "  Work   notes ", "description": "Policies"}, headers=auth)
    assert created.status_code == 201
    work = created.json()
    assert (work["name"], work["description"], work["documents"]) == ("Work notes", "Policies", 0)
    assert work["document_ids"] == [] and work["created_at"].endswith("Z")
    client.post("/v6/collections", json={"name": "Archive"}, headers=auth)
    listed = client.get("/v6/collections", headers=auth).json()["collections"]
    assert [c["name"] for c in listed] == ["Archive", "Work notes"]  # by name
    assert "document_ids" not in listed[0]

    renamed = client.patch(f"/v6/collections/{work['id']}", json={"name": "Work"}, headers=auth)
    assert renamed.status_code == 200 and renamed.json()["name"] == "Work"
    assert vault.collections.get(work["id"]).name == "Work"

    deleted = client.delete(f"/v6/collections/{work['id']}", headers=auth)
    assert deleted.json() == {"collection_id": work["id"], "deleted": True}
    assert_error(client.get(f"/v6/collections/{work['id']}", headers=auth), 404, "not_found")
    assert [c.name for c in vault.collections()] == ["Archive"]


def test_names_are_unique_regardless_of_case(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    client.post("/v6/collections", json={"name": "Recipes"}, headers=auth)
    other = client.post("/v6/collections", json={"name": "Other"}, headers=auth).json()
    before = table_counts(vault)
    assert_error(client.post("/v6/collections", json={"name": "recipes"}, headers=auth), 409)
    taken = client.patch(f"/v6/collections/{other['id']}", json={"name": "RECIPES"}, headers=auth)
    assert_error(taken, 409, "conflict")
    assert table_counts(vault) == before
    blank = client.post("/v6/collections", json={"name": "   "}, headers=auth)
    assert assert_error(blank, 400)["details"]["field"] == "name"  # type: ignore[index]


def test_documents_join_and_leave_a_collection_and_stay_in_the_vault(
    client: httpx.Client, auth: dict[str, str], vault: Vault
) -> None:
    first, second = upload(vault, "one.md"), upload(vault, "two.md")
    collection = client.post("/v6/collections", json={"name": "Pair"}, headers=auth).json()
    url = f"/v6/collections/{collection['id']}"
    added = client.post(f"{url}/documents", json={"document_ids": [first, second]}, headers=auth)
    assert added.status_code == 200
    assert sorted(added.json()["document_ids"]) == sorted([first, second])
    assert added.json()["documents"] == 2
    # adding a member again is fine
    again = client.post(f"{url}/documents", json={"document_ids": [first]}, headers=auth).json()
    assert again["documents"] == 2
    read = client.get(url, headers=auth).json()
    assert sorted(read["document_ids"]) == sorted([first, second])

    removed = client.delete(f"{url}/documents/{first}", headers=auth)
    assert removed.status_code == 200 and removed.json()["document_ids"] == [second]
    assert vault.documents.get(first).info.collection_ids == ()  # the document itself stays

    client.delete(url, headers=auth)
    assert {d.id for d in vault.documents()} == {first, second}


def test_membership_errors(client: httpx.Client, auth: dict[str, str], vault: Vault) -> None:
    doc = upload(vault, "mine.md")
    collection = client.post("/v6/collections", json={"name": "Box"}, headers=auth).json()
    url = f"/v6/collections/{collection['id']}/documents"
    other_user = vault.collections.create("Theirs", user_id="someone-else")
    before = table_counts(vault)
    missing_doc = client.post(url, json={"document_ids": [doc, 987_654]}, headers=auth)
    assert assert_error(missing_doc, 404)["details"]["kind"] == "document"  # type: ignore[index]
    assert vault.collections.document_ids(collection["id"]) == []  # all or nothing
    empty = client.post(url, json={"document_ids": []}, headers=auth)
    assert assert_error(empty, 400)["details"]["field"] == "document_ids"  # type: ignore[index]
    nowhere = client.post("/v6/collections/987654/documents", json={"document_ids": [doc]}, headers=auth)
    assert assert_error(nowhere, 404)["details"]["kind"] == "collection"  # type: ignore[index]
    foreign = client.post(f"/v6/collections/{other_user.id}/documents", json={"document_ids": [doc]}, headers=auth)
    assert assert_error(foreign, 400)["details"]["field"] == "document_ids"  # type: ignore[index]
    assert table_counts(vault) == before
    for method, path in (
        ("GET", "/v6/collections/987654"),
        ("PATCH", "/v6/collections/987654"),
        ("DELETE", "/v6/collections/987654"),
        ("DELETE", f"/v6/collections/987654/documents/{doc}"),
    ):
        body = {"name": "x"} if method == "PATCH" else None
        assert_error(client.request(method, path, json=body, headers=auth), 404, "not_found")
