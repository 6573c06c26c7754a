"""The in-memory vector mirror: exact search, kept in step with writes, and the measured reduced first pass."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine import Vault
from engine.ai.embedders import HashingEmbedder
from engine.recall.types import RecallRequest
from engine.vectors import VectorItem, postings as sparse
from engine.vectors.matrix import MatrixMirror
from engine.vectors.ops import matvec
from engine.vectors.postings import Postings
from engine.vectors.questions import MIN_QUESTIONS, QUESTION_MEMORY, RECHECK_QUESTIONS
from engine.vectors.reduced import CAUTIOUS_CHOICES, QUESTION_K, TARGET_RECALL, Reducer, top_by_sampled_threshold
from engine.vectors.sqlite_vec import SqliteVecIndex, VectorChange


def unit(m: np.ndarray) -> np.ndarray:
    out: np.ndarray = (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)
    return out


def clustered(n: int, dim: int = 64, clusters: int = 40, seed: int = 1) -> np.ndarray:
    """Vectors near a few dozen directions in a low-rank subspace, like real embeddings (not isotropic noise)."""
    rng = np.random.default_rng(seed)
    basis = rng.standard_normal((16, dim))
    centres = rng.standard_normal((clusters, 16)) @ basis
    labels = rng.integers(0, clusters, n)
    return unit(centres[labels] + 0.35 * rng.standard_normal((n, 16)) @ basis + 0.05 * rng.standard_normal((n, dim)))


def hashed(n: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``n`` statements and 40 questions embedded by the built-in hashing embedder (sparse vectors)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}x{'ab'[i % 2] * (i % 5)}" for i in range(3000)]
    statements = [" ".join(rng.choice(words, size=int(rng.integers(4, 12)))) for _ in range(n)]
    questions = [" ".join(rng.choice(words, size=int(rng.integers(2, 6)))) for _ in range(40)]
    embedder = HashingEmbedder(384)
    return np.asarray(embedder.embed(statements)), np.asarray(embedder.embed(questions))


def test_postings_scores_equal_the_dense_product() -> None:
    data, questions = hashed(3000)
    postings = Postings.build(data, 2500)
    for q in questions[:10]:
        dims = np.flatnonzero(q)
        assert np.allclose(postings.scores(q, dims), data[:2500] @ q, atol=1e-5)
        assert postings.cost(dims) == int(np.count_nonzero(data[:2500][:, dims]))


def test_extended_postings_equal_postings_built_from_scratch() -> None:
    data, _questions = hashed(6000, seed=5)
    grown = Postings.build(data, 4000).extended(data, 6000)
    fresh = Postings.build(data, 6000)
    assert grown.upto == fresh.upto == 6000
    assert grown.starts.tolist() == fresh.starts.tolist()
    assert grown.rows.tolist() == fresh.rows.tolist() and grown.values.tolist() == fresh.values.tolist()


def test_sparse_shelves_are_searched_exactly_through_postings_as_they_change() -> None:
    """Hashing vectors get postings; every answer is the exact top k, through appends, rewrites, deletes, users and
    compaction — rows the postings do not yet describe are scored directly."""
    data, questions = hashed(12_000, seed=2)
    mirror = MatrixMirror(384)
    mirror.upsert((i, "event", "alice" if i % 4 else "bob", data[i]) for i in range(9_000))
    assert mirror.build_postings() == ["event"]
    shelf = mirror._shelves["event"]
    assert shelf.postings is not None and shelf.postings.upto == 9_000

    def check(live: dict[int, np.ndarray], user: str | None = None) -> None:
        ids = np.array(sorted(live))
        vecs = np.array([live[i] for i in ids])
        for q in questions:
            found = mirror.search(q, 15, kinds=["event"], user_id=user)
            assert len({i for i, _k, _s in found}) == len(found) == 15
            sims = vecs @ q
            # the similarities of the dense product's top 15, in order, each from a row that has it
            assert np.allclose([s for _i, _k, s in found], np.sort(sims)[::-1][:15], atol=1e-5)
            assert all(abs(float(live[i] @ q) - s) < 1e-5 for i, _k, s in found)

    live = {i: data[i] for i in range(9_000)}
    check(live)
    mirror.upsert((i, "event", "alice", data[i]) for i in range(9_000, 10_000))  # a tail the postings lack
    live.update({i: data[i] for i in range(9_000, 10_000)})
    check(live)
    assert mirror.build_postings() == [] and shelf.postings.upto == 9_000, "a small tail is scored directly"
    rewritten = {i: data[11_000 + i] for i in range(0, 400, 3)}  # rows below ``upto`` given other vectors
    mirror.upsert((i, "event", "alice" if i % 4 else "bob", v) for i, v in rewritten.items())
    live.update(rewritten)
    assert shelf.stale == set(rewritten)
    check(live)
    mirror.delete(range(1, 300, 2))
    for i in range(1, 300, 2):
        live.pop(i)
    check(live)
    bob = {i: v for i, v in live.items() if i < 9_000 and i % 4 == 0}
    check(bob, "bob")
    mirror.upsert((i, "event", "alice", data[i]) for i in range(10_000, 12_000))  # a tail past the threshold
    live.update({i: data[i] for i in range(10_000, 12_000)})
    mirror.build_postings()
    assert shelf.postings.upto == 12_000 and shelf.stale == set(rewritten), "extended: old rewrites still stale"
    check(live)
    mirror.delete(range(300, 4_000))  # enough dead rows to compact: row numbers change, postings dropped
    for i in range(300, 4_000):
        live.pop(i)
    assert mirror._shelves["event"].postings is None
    check(live)  # scanned directly meanwhile (and the search asks for postings to be built again)
    mirror.build_postings()  # waits for the background build, or builds
    rebuilt = mirror._shelves["event"].postings
    assert rebuilt is not None and rebuilt.upto == len(live)
    check(live)


def wait_for(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        threading.Event().wait(0.05)
    raise AssertionError("not within 10 s")


def test_postings_are_built_off_the_request_path_and_only_for_sparse_vectors() -> None:
    data, questions = hashed(sparse.MIN_ROWS + 100, seed=3)
    mirror = MatrixMirror(384)
    mirror.upsert((i, "fact", "u", data[i]) for i in range(len(data)))
    mirror.search(questions[0], 5)  # asks for them; a background thread builds them
    wait_for(lambda: mirror._shelves["fact"].postings is not None)
    assert mirror._shelves["fact"].postings is not None
    # a loaded mirror builds them after loading, and extends them while writes come in, with no search asking
    loaded = MatrixMirror(384)
    loaded.replace_all((i, "fact", "u", data[i]) for i in range(sparse.MIN_ROWS))
    wait_for(lambda: loaded._shelves["fact"].postings is not None)
    loaded.upsert((i, "fact", "u", data[i]) for i in range(sparse.MIN_ROWS, len(data)))
    assert loaded._shelves["fact"].postings.upto == sparse.MIN_ROWS, "100 rows: scored directly, not worth a build"
    more, _q = hashed(sparse.TAIL_ROWS, seed=4)
    loaded.upsert((100_000 + i, "fact", "u", v) for i, v in enumerate(more))
    wait_for(lambda: loaded._shelves["fact"].postings.upto == len(data) + len(more))
    dense = MatrixMirror(64)
    dense.upsert((i, "fact", "u", v) for i, v in enumerate(clustered(sparse.MIN_ROWS + 100)))
    assert dense.build_postings() == [] and dense._shelves["fact"].postings is None
    assert dense._shelves["fact"].dense_at == sparse.MIN_ROWS + 100, "not tried again until the shelf doubles"


def test_exact_search_matches_numpy_and_filters_by_kind_and_user() -> None:
    data = clustered(3000)
    mirror = MatrixMirror(64)
    mirror.upsert((i, "fact" if i % 2 else "event", "alice" if i % 3 else "bob", data[i]) for i in range(3000))
    q = data[7]
    found = mirror.search(q, 10, kinds=["fact"], user_id="alice")
    allowed = [i for i in range(3000) if i % 2 and i % 3]
    expected = sorted(allowed, key=lambda i: -float(data[i] @ q))[:10]
    assert [i for i, _k, _s in found] == expected
    assert all(kind == "fact" for _i, kind, _s in found)
    mirror.delete([expected[0]])
    assert expected[0] not in [i for i, _k, _s in mirror.search(q, 10, kinds=["fact"], user_id="alice")]
    assert mirror.search(q, 5, user_id="nobody") == []


def test_reduced_first_pass_is_fitted_only_when_recall_holds() -> None:
    structured = clustered(40_000)
    reducer = Reducer.fit(structured)
    assert reducer is not None and reducer.stats.recall >= 0.99 and reducer.stats.dims < 64
    noise = unit(np.random.default_rng(3).standard_normal((40_000, 64)))
    assert Reducer.fit(noise) is None, "isotropic noise has no principal directions: keep scanning exactly"


def test_sampled_threshold_picks_exactly_the_rows_a_full_partition_picks() -> None:
    """The cheap pool selection is the full partition's answer, or declines (never a different set)."""
    rng = np.random.default_rng(3)
    pool = 3000
    shapes = {
        "normal": rng.standard_normal(100_000),
        "skewed": rng.exponential(size=100_000) ** 3,
        "clustered": np.repeat(rng.standard_normal(50), 2_000),
    }
    answered = 0
    for name, scores in shapes.items():
        coarse = scores.astype(np.float32)
        rows = top_by_sampled_threshold(coarse, pool)
        full = np.argpartition(coarse, coarse.size - pool)[coarse.size - pool :]
        if rows is None:
            continue
        answered += 1
        assert rows.size == pool, name
        assert np.sort(coarse[rows]).tolist() == np.sort(coarse[full]).tolist(), name
    assert answered >= 2
    # When the sampled scores are unrepresentative (here: every sampled row is high, the rest low) too few rows pass
    # the estimated threshold, and it declines rather than return a short pool.
    biased = np.zeros(40_000, dtype=np.float32)
    biased[::16] = 1.0
    assert top_by_sampled_threshold(biased, pool) is None


def test_mirror_with_first_pass_returns_the_exact_top_results() -> None:
    everything = clustered(45_001, seed=4)
    data, fresh = everything[:45_000], everything[45_000]
    mirror = MatrixMirror(64)
    mirror.upsert((i, "span", "u", data[i]) for i in range(45_000))
    fitted = mirror.maintain()
    assert fitted and fitted[0].vectors == 45_000
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(30):
        q = unit(data[rng.integers(0, 45_000)] + data[rng.integers(0, 45_000)])
        exact = np.sort(data @ q)[::-1]
        found = mirror.search(q, 20, kinds=["span"])
        assert [s for _i, _k, s in found] == sorted((s for _i, _k, s in found), reverse=True)
        hits += sum(1 for _i, _k, s in found if s >= exact[19] - 1e-6)
    assert hits / (30 * 20) >= 0.97
    # rows written after the fit are projected at once and found
    mirror.upsert([(999_999, "span", "u", fresh)])
    assert mirror.search(fresh, 1, kinds=["span"])[0][0] == 999_999


def test_mirror_follows_the_store(vault: Vault) -> None:
    ids = vault.store.write(lambda tx: tx.new_ids("fact", 3))
    vectors = unit(np.eye(3, vault.vectors.dim))
    vault.vectors.load_mirror()
    vault.store.write(
        lambda tx: vault.vectors.add(tx, [VectorItem(i, "fact", "default", vectors[n], "h") for n, i in enumerate(ids)])
    )
    assert vault.vectors.mirror.count() == 3
    assert vault.vectors.search(vectors[1], 1)[0].object_id == ids[1]
    vault.store.write(lambda tx: vault.vectors.delete(tx, [ids[1]]))
    assert ids[1] not in [h.object_id for h in vault.vectors.search(vectors[1], 3)]

    def fails(tx):  # type: ignore[no-untyped-def]
        vault.vectors.add(tx, [VectorItem(ids[1], "fact", "default", vectors[1], "h")])
        raise RuntimeError("rolled back")

    try:
        vault.store.write(fails)
    except RuntimeError:
        pass
    assert ids[1] not in [h.object_id for h in vault.vectors.search(vectors[1], 3)], "rollback leaves no trace"


def test_matvec_equals_the_matrix_product() -> None:
    data = clustered(5000)
    q = data[3]
    assert np.allclose(matvec(data, q), data @ q, atol=1e-5)


def test_rebuild_replays_writes_that_commit_while_it_reads() -> None:
    data = clustered(10)
    mirror = MatrixMirror(64)
    mirror.upsert((i, "fact", "u", data[i]) for i in range(3))

    def read() -> list[tuple[int, str, str, np.ndarray]]:
        rows = [(i, "fact", "u", data[i]) for i in range(3)]  # the store as the read saw it
        mirror.upsert([(7, "event", "u", data[7])])  # committed while the read was running
        mirror.delete([1])
        return rows

    mirror.rebuild(read)
    found = {i for i, _k, _s in mirror.search(data[0], 10)}
    assert found == {0, 2, 7}
    mirror.upsert([(8, "fact", "u", data[8])])  # after the rebuild: applied directly, not recorded
    assert mirror._journal is None and 8 in {i for i, _k, _s in mirror.search(data[8], 1)}


def test_first_pass_survives_rebuild_and_compaction_and_is_fitted_once() -> None:
    data = clustered(45_000, seed=5)
    mirror = MatrixMirror(64)
    rows = [(i, "span", "u", data[i]) for i in range(45_000)]
    mirror.upsert(rows)
    with ThreadPoolExecutor(2) as pool:  # the vault's loader and a second caller at once
        fits = list(pool.map(lambda _n: mirror.maintain(), range(2)))
    assert sorted(len(f) for f in fits) == [0, 1], "fitted once: the second caller waits and finds it done"
    mirror.rebuild(lambda: rows)
    assert "span" in mirror.reduced_stats(), "a reload (after a forget, or a second loader) keeps the fitted basis"
    mirror.delete(range(0, 45_000, 2))  # enough dead rows to compact
    assert "span" in mirror.reduced_stats()
    q = unit(data[1] + data[3])
    live = np.arange(1, 45_000, 2)
    exact = live[np.argsort(-(data[live] @ q))[:10]]
    assert [i for i, _k, _s in mirror.search(q, 10, kinds=["span"])] == list(exact)


# -- the first pass judged on questions ------------------------------------------------------------------------------
#: Rows of :func:`layered`: 10 strong dimensions, 6 medium, 48 faint, so principal components rank them in that order
#: and a first pass of d dimensions keeps exactly the d strongest.
LAYERS = np.r_[np.full(10, 1.0), np.full(6, 0.5), np.full(48, 0.05)]


def layered(n: int, seed: int = 1) -> np.ndarray:
    """Dense 64-d rows whose variance falls in three steps (see :data:`LAYERS`)."""
    return unit(np.random.default_rng(seed).standard_normal((n, 64)) * LAYERS)


def asking(low: int, high: int, count: int, seed: int) -> np.ndarray:
    """Questions that differ from the data: all their weight on dimensions ``low``..``high`` - 1.

    Data vectors and blends of two carry most of their weight on the strong dimensions, so a 10-d first pass keeps
    their neighbours; these questions score nothing there and a first pass without their dimensions loses them."""
    questions = np.zeros((count, 64))
    questions[:, low:high] = np.random.default_rng(seed).standard_normal((count, high - low))
    return unit(questions)


def exact_ids(data: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(data @ q), kind="stable")[:k]]


def test_fit_is_judged_on_questions_as_well_as_on_data_samples() -> None:
    data = layered(20_000)
    on_data = Reducer.fit(data)
    assert on_data is not None and on_data.stats.dims == 10, "data samples alone earn the cheapest choice"
    assert on_data.stats.question_recall is None and on_data.stats.questions == 0
    medium = asking(10, 16, 64, seed=2)
    lost = on_data.question_recall(data, on_data.project(data), medium)
    assert lost < 0.5, "the 10-d first pass loses most of these questions' exact top 60"
    judged = Reducer.fit(data, questions=medium)
    assert judged is not None and judged.stats.dims == 16, "the next choice keeps the questions' dimensions"
    assert judged.stats.question_recall is not None and judged.stats.question_recall >= TARGET_RECALL
    assert judged.stats.questions == 64 and judged.stats.recall >= TARGET_RECALL
    assert Reducer.fit(data, questions=asking(16, 64, 64, seed=3)) is None, "no choice keeps faint questions: exact"
    cautious = Reducer.fit(data, choices=CAUTIOUS_CHOICES)
    assert cautious is not None and cautious.stats.dims == 64 // 3


def test_mirror_remembers_questions_and_refits_or_scans_exactly_when_they_are_lost() -> None:
    """No questions yet: the cautious choice.  Enough questions that it keeps: a cheaper choice they allow.  Later
    questions the first pass loses: fitted again, here to exact scanning, and searches give the exact top k."""
    data = layered(20_000, seed=4)
    mirror = MatrixMirror(64, min_vectors=10_000)
    mirror.upsert((i, "event", "u", data[i]) for i in range(len(data)))
    fitted = mirror.maintain()
    assert [s.dims for s in fitted] == [64 // 3] and fitted[0].questions == 0, "before questions: cautious"
    assert mirror.maintain() == [], "nothing new: not fitted again"

    medium = asking(10, 16, MIN_QUESTIONS, seed=5)
    for q in medium[:-1]:
        mirror.remember_question(q)
    assert mirror.maintain() == [], "too few questions to judge by"
    mirror.remember_question(medium[-1])
    mirror.remember_question(np.ones(32, dtype=np.float32))  # another space's size: ignored
    assert len(mirror.questions()) == MIN_QUESTIONS
    refitted = mirror.maintain()
    assert [s.dims for s in refitted] == [16] and refitted[0].questions == MIN_QUESTIONS
    assert mirror.reduced_stats()["event"].question_recall == 1.0

    faint = asking(16, 64, QUESTION_MEMORY, seed=6)
    for q in faint[: RECHECK_QUESTIONS - 1]:
        mirror.remember_question(q)
    assert mirror.maintain() == [] and "event" in mirror.reduced_stats(), "not checked again before enough come"
    for q in faint[RECHECK_QUESTIONS - 1 :]:
        mirror.remember_question(q)
    assert len(mirror.questions()) == QUESTION_MEMORY, "only the latest are kept"
    assert mirror.maintain() == [] and "event" not in mirror.reduced_stats(), "lost on questions: scanned exactly"
    for q in faint[:20]:
        assert [i for i, _k, _s in mirror.search(q, QUESTION_K, kinds=["event"])] == exact_ids(data, q, QUESTION_K)


def test_a_first_pass_that_keeps_the_questions_is_checked_not_refitted() -> None:
    data = layered(20_000, seed=7)
    mirror = MatrixMirror(64, min_vectors=10_000)
    mirror.upsert((i, "event", "u", data[i]) for i in range(len(data)))
    for q in asking(10, 16, MIN_QUESTIONS, seed=8):
        mirror.remember_question(q)
    assert [s.dims for s in mirror.maintain()] == [16]
    reducer = mirror.reducers()["event"]
    for q in asking(0, 16, RECHECK_QUESTIONS, seed=9):
        mirror.remember_question(q)
    assert mirror.maintain() == [], "checked again and kept"
    assert mirror.reducers()["event"] is reducer
    assert reducer.stats.questions == MIN_QUESTIONS + RECHECK_QUESTIONS and reducer.stats.question_recall == 1.0


def test_questions_leave_the_sparse_shelves_of_the_hashing_embedder_as_they_were() -> None:
    """Sparse shelves are fitted on the data as before and never judged on questions (their postings answer exactly
    whenever reading a question's dimensions costs less than the first pass): every answer is the one a mirror that
    was asked nothing gives."""
    data, questions = hashed(12_000, seed=6)
    asked = MatrixMirror(384, min_vectors=10_000)
    plain = MatrixMirror(384, min_vectors=10_000)
    for mirror in (asked, plain):
        mirror.upsert((i, "event", "u", data[i]) for i in range(len(data)))
    for q in np.tile(questions, (2, 1)):
        asked.remember_question(q)
    assert len(asked.questions()) >= MIN_QUESTIONS
    assert [(s.dims, s.pool, s.questions) for s in asked.maintain()] == [
        (s.dims, s.pool, s.questions) for s in plain.maintain()
    ]
    assert all(s.questions == 0 and s.question_recall is None for s in asked.reduced_stats().values())
    assert asked._shelves["event"].postings is not None
    for q in questions:
        assert asked.search(q, 30, kinds=["event"]) == plain.search(q, 30, kinds=["event"])
    for q in questions:
        asked.remember_question(q)
    fits = asked.reducers()
    assert asked.maintain() == [] and asked.reducers() == fits, "more questions: nothing refitted"


def test_a_long_question_on_a_sparse_shelf_is_answered_exactly_not_by_the_first_pass() -> None:
    """A shelf with postings and a fitted first pass: a question with many words, whose postings cost more than the
    first pass, still gets the exact top k (the postings or the full scan; never the approximate pass)."""
    data, _questions = hashed(12_000, seed=7)
    mirror = MatrixMirror(384, min_vectors=10_000)
    mirror.upsert((i, "event", "u", data[i]) for i in range(len(data)))
    mirror.maintain()
    assert mirror.build_postings() == ["event"] or mirror._shelves["event"].postings is not None
    shelf = mirror._shelves["event"]
    assert shelf.reducer is not None, "the shelf has a first pass the long questions could have taken"
    rng = np.random.default_rng(8)
    long_questions = unit(
        np.asarray(
            HashingEmbedder(384).embed(
                [" ".join(f"w{int(i)}x" for i in rng.integers(0, 3000, size=160)) for _ in range(20)]
            )
        )
    )
    dims_of = [np.flatnonzero(q) for q in long_questions]
    first_pass_dims = shelf.reducer.projection.shape[1]
    assert any(
        shelf.postings is not None and shelf.postings.cost(d) * sparse.ENTRY_COST > len(data) * first_pass_dims
        for d in dims_of
    ), "at least one question costs more through the postings than through the first pass"
    for q in long_questions:
        assert [i for i, _k, _s in mirror.search(q, 60, kinds=["event"])] == exact_ids(data, q, 60)


def test_recall_notes_its_question_and_followers_learn_a_dropped_first_pass(vault: Vault) -> None:
    vault.recall(RecallRequest(conversation_id="c", query="Where does Ada live now?"))
    noted = vault.vectors.mirror.questions()
    assert noted.shape == (1, vault.vectors.dim)
    assert np.allclose(noted[0], vault.embedder.embed(["Where does Ada live now?"])[0])

    data = layered(20_000, seed=10)
    index = SqliteVecIndex(vault.store, "test:layered", 64)
    index.mirror = MatrixMirror(64, min_vectors=10_000)  # a first pass from 10k vectors, not 40k
    told: list[VectorChange] = []
    index.follow(told.append)
    index.mirror.replace_all((i, "event", "u", data[i]) for i in range(len(data)))
    assert [s.dims for s in index.maintain()] == [64 // 3]
    assert told and told[-1][0] == "reducers" and told[-1][1]["event"] is index.mirror.reducers()["event"]
    for q in asking(16, 64, MIN_QUESTIONS, seed=11):
        index.note_question(q)
    assert index.maintain() == []
    assert told[-1] == ("reducers", {"event": None}), "a copy elsewhere drops it too"
    follower = MatrixMirror(64)
    follower.replace_all((i, "event", "u", data[i]) for i in range(len(data)))
    follower.install("event", index.mirror.reducers().get("event"))
    assert follower.reducers() == {}
