"""The truth benchmark: does the vault believe the user's *current* truth after real chat exports?

Each persona of a truth set (``../shared/bench-data/truth-dev`` by default; its README defines the formats and the
check kinds) goes through the real path, in a fresh vault of its own:

1. ``cairn import`` of the persona's export (a subprocess, the command a user runs), which waits until enrichment is
   idle;
2. the vault is opened with its endpoint on loopback, the job queue is checked empty (parked jobs are reported);
3. the checks run over the public REST API, at the persona's ``reference_time``:

   - ``answer``: ``POST /v6/recall`` with the query, ``reference_time`` and a conversation id of the scorer's own;
     the best answer fact is the first of ``answer_facts`` (else of ``supporting_facts``), read back with
     ``GET /v6/facts/{id}`` for its statement;
   - ``present`` / ``absent`` / ``dated``: the active facts (``GET /v6/facts?status=active``, every page);
   - ``conflict``: the open conflicts (``GET /v6/conflicts``) and their two sides' statements.

A fact's statement is its ``statement`` field, the one line recall puts into a prompt ("User lives in Lisbon",
"Noa lives in Haifa"); that one rendering is used for every check.  Matching is case-insensitive substring
matching.  A persona whose import fails fails all of its checks.

Prints the pass rate overall, per kind, per persona and per phenomenon (the set's README table, when it has one)
and, for a held-out split (``--split``: personas with odd or even numbers), the same for each half, so a change
tuned on one half can be checked on the other.  ``--json FILE`` writes everything, failures included.

Usage: ``python -m bench.truth [--data DIR] [--only 01,03] [--json FILE] [--failures] [--llm-model NAME]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import ROOT, machine

DEFAULT_TRUTH = ROOT.parent / "shared" / "bench-data" / "truth-dev"
KINDS = ("answer", "present", "absent", "conflict", "dated")
#: The conversation id the scorer recalls from: none of the imported conversations.
SCORER_CONVERSATION = "truth-bench:scorer"


@dataclass
class Outcome:
    """One check's result, with what was seen (for the failure list)."""

    id: str
    kind: str
    passed: bool
    seen: str = ""


@dataclass
class PersonaResult:
    """A persona's outcomes and how its run went."""

    persona: str
    number: str
    outcomes: list[Outcome] = field(default_factory=list)
    error: str | None = None
    parked_jobs: int = 0
    facts: int = 0
    seconds: float = 0.0


def main(argv: list[str] | None = None) -> int:
    """Run the checks of every persona (or ``--only`` some) and print the rates."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_TRUTH, help="A truth set (checks/ and conversations/).")
    parser.add_argument("--only", default="", help="Comma-separated persona numbers or slugs to run.")
    parser.add_argument("--json", type=Path, default=None, help="Write the results here.")
    parser.add_argument("--failures", action="store_true", help="List every failed check with what was seen.")
    parser.add_argument(
        "--llm-model", default="", help="Extract with this Ollama model (default: the rule path, no model)."
    )
    parser.add_argument("--keep", type=Path, default=None, help="Keep each persona's vault under this folder.")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="Import through the Vault facade in this process instead of `cairn import` (for A/B runs of a patched "
        "pipeline, e.g. bench.parser_eval); the checks still go over the REST API.",
    )
    args = parser.parse_args(argv)
    check_files = sorted((args.data / "checks").glob("*.json"))
    if not check_files:
        raise SystemExit(f"no checks/*.json in {args.data}")
    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    results: list[PersonaResult] = []
    specs = [json.loads(p.read_text(encoding="utf-8")) | {"_file": p} for p in check_files]
    if wanted:
        specs = [s for s in specs if _number(s["_file"]) in wanted or s["persona"] in wanted]
    extractor = f"ollama:{args.llm_model}" if args.llm_model else "rules (no model)"
    print(f"truth benchmark: {len(specs)} personas from {args.data}, extractor {extractor}", file=sys.stderr)
    for spec in specs:
        t0 = time.perf_counter()
        result = run_persona(spec, args.data, llm_model=args.llm_model, keep=args.keep, in_process=args.in_process)
        result.seconds = round(time.perf_counter() - t0, 2)
        results.append(result)
        passed = sum(o.passed for o in result.outcomes)
        note = f" ERROR {result.error}" if result.error else ""
        print(
            f"  {result.number} {result.persona:32} {passed}/{len(result.outcomes)} "
            f"({result.facts} facts, {result.seconds:.1f} s){note}",
            file=sys.stderr,
        )
    phenomena = _phenomena(args.data / "README.md")
    report = summarise(results, phenomena)
    report["extractor"] = extractor
    report["machine"] = machine()
    report["data"] = str(args.data)
    _print(report, results, failures=args.failures)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def run_persona(
    spec: dict[str, Any], data: Path, *, llm_model: str = "", keep: Path | None = None, in_process: bool = False
) -> PersonaResult:
    """Import one persona into a fresh vault and run its checks; any failure fails all its checks."""
    number = _number(spec["_file"])
    result = PersonaResult(persona=spec["persona"], number=number)
    checks = spec["checks"]
    with tempfile.TemporaryDirectory(prefix="cairn-truth-") as tmp:
        root = (keep / f"{number}-{spec['persona']}") if keep is not None else Path(tmp) / "vault"
        try:
            _prepare(root, llm_model)
            (_import_here if in_process else _import)(root, data / spec["conversations"])
            with _Served(root) as api:
                result.parked_jobs = api.parked_jobs()
                facts = api.active_facts()
                result.facts = len(facts)
                conflicts = api.open_conflicts()
                for check in checks:
                    result.outcomes.append(_run_check(check, api, facts, conflicts, spec["reference_time"]))
        except Exception as exc:  # a persona that cannot run fails every check, visibly
            result.error = f"{type(exc).__name__}: {exc}"
            result.outcomes = [Outcome(c["id"], c["kind"], False, "not run") for c in checks]
    return result


def _prepare(root: Path, llm_model: str) -> None:
    """A fresh vault folder whose settings name the extractor under test (nothing else differs from defaults)."""
    if root.exists() and any(root.iterdir()):
        raise RuntimeError(f"{root} is not empty: each persona needs a fresh vault")
    root.mkdir(parents=True, exist_ok=True)
    llm = f'[llm]\nprovider = "ollama"\nmodel = "{llm_model}"\n' if llm_model else '[llm]\nprovider = "simple"\n'
    (root / "settings.toml").write_text(llm + '\n[embedder]\nprovider = "hashing"\n', encoding="utf-8")


def _import(root: Path, transcript: Path) -> None:
    """``cairn import`` in its own process, as a user runs it; it returns once enrichment is idle."""
    env = {**os.environ, "CAIRN_HOME": ""}
    env.pop("CAIRN_TESTING", None)
    cmd = [sys.executable, "-m", "app", "--vault", str(root), "import", str(transcript)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"cairn import failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")


def _import_here(root: Path, transcript: Path) -> None:
    """The same import through the Vault facade in this process, to idle."""
    from app.runtime import open_vault

    vault = open_vault(root, set_up_logging=False)
    try:
        summary = vault.conversations.import_summary(transcript)
        if summary.errors:
            raise RuntimeError(f"import failed: {summary.errors[0]}")
        if not vault.jobs.wait_idle(timeout=1800):
            raise RuntimeError("enrichment did not finish")
    finally:
        vault.close()


class _Served:
    """The vault open with its endpoint on a free loopback port, and a client holding its token."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __enter__(self) -> _Served:
        import httpx

        from app.runtime import make_endpoint, open_vault

        self.vault = open_vault(self.root, set_up_logging=False)
        if not self.vault.jobs.wait_idle(timeout=1800):
            self.vault.close()
            raise RuntimeError("enrichment did not finish")
        self.server = make_endpoint(self.vault, 0)
        self.server.start()
        token = self.vault.endpoint_token()
        self.http = httpx.Client(
            base_url=self.server.address, headers={"Authorization": f"Bearer {token}"}, timeout=60.0
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()
        self.server.stop()
        self.vault.close()

    def _get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def parked_jobs(self) -> int:
        """Jobs that failed for good (reported, never hidden)."""
        stats = self._get("/v6/jobs")
        queued = int(stats.get("queued", 0)) + int(stats.get("running", 0))
        if queued:
            raise RuntimeError(f"{queued} jobs still queued or running after enrichment was idle")
        return int(stats.get("failed", 0))

    def active_facts(self) -> list[dict[str, Any]]:
        """Every active fact, all subjects, every page."""
        facts: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"status": "active", "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            page = self._get("/v6/facts", **params)
            facts.extend(page["facts"])
            cursor = page.get("next_cursor")
            if not cursor:
                return facts

    def open_conflicts(self) -> list[dict[str, Any]]:
        """Open conflicts with both sides."""
        return list(self._get("/v6/conflicts", status="open", limit=1000)["conflicts"])

    def best_answer(self, query: str, reference_time: str) -> dict[str, Any] | None:
        """The first answer fact recall returns for ``query`` (else the first supporting fact), as a fact."""
        body = {"conversation_id": SCORER_CONVERSATION, "query": query, "reference_time": reference_time}
        response = self.http.post("/v6/recall", json=body)
        response.raise_for_status()
        out = response.json()
        for block in [*out.get("answer_facts", []), *out.get("supporting_facts", [])]:
            if block.get("kind") == "fact":
                fact: dict[str, Any] = self._get(f"/v6/facts/{block['id']}")
                return fact
        return None


def _run_check(
    check: dict[str, Any], api: _Served, facts: list[dict[str, Any]], conflicts: list[dict[str, Any]], ref: str
) -> Outcome:
    kind = check["kind"]
    cid = check["id"]
    if kind == "answer":
        fact = api.best_answer(check["query"], ref)
        if fact is None:
            return Outcome(cid, kind, False, "no fact returned")
        statement = fact["statement"]
        ok = _any_in(check["expect_any"], statement) and not _any_in(check.get("forbid", []), statement)
        return Outcome(cid, kind, ok, statement)
    if kind in ("present", "absent", "dated"):
        wanted = check["all_of"]
        matching = [f for f in facts if all(_has(w, f["statement"]) for w in wanted)]
        if kind == "present":
            return Outcome(cid, kind, bool(matching), _seen(matching) or _near(facts, wanted))
        if kind == "absent":
            return Outcome(cid, kind, not matching, _seen(matching))
        prefix = check["date_prefix"]
        dated = [f for f in matching if str(f.get("valid_from") or "")[:10].startswith(prefix)]
        seen = "; ".join(f"{f['statement']} @ {str(f.get('valid_from') or '')[:10]}" for f in matching[:4])
        return Outcome(cid, kind, bool(dated), seen or _near(facts, wanted))
    if kind == "conflict":
        a, b = check["values"]
        for conflict in conflicts:
            one, two = conflict["fact_a"]["statement"], conflict["fact_b"]["statement"]
            if (_has(a, one) and _has(b, two)) or (_has(a, two) and _has(b, one)):
                return Outcome(cid, kind, True, f"{one} ⟷ {two}")
        seen = "; ".join(f"{c['fact_a']['statement']} ⟷ {c['fact_b']['statement']}" for c in conflicts[:4])
        return Outcome(cid, kind, False, seen or _near(facts, [a]) + " | " + _near(facts, [b]))
    return Outcome(cid, kind, False, f"unknown check kind {kind!r}")


def _has(needle: str, hay: str) -> bool:
    return needle.casefold() in hay.casefold()


def _any_in(needles: Iterable[str], hay: str) -> bool:
    return any(_has(n, hay) for n in needles)


def _seen(facts: list[dict[str, Any]]) -> str:
    return "; ".join(f["statement"] for f in facts[:4])


def _near(facts: list[dict[str, Any]], wanted: list[str]) -> str:
    """For a failure: facts that hold any of the wanted strings."""
    near = [f["statement"] for f in facts if any(_has(w, f["statement"]) for w in wanted)]
    return ("(near: " + "; ".join(near[:4]) + ")") if near else "(no fact mentions it)"


def _number(path: Path) -> str:
    return path.name.split("-", 1)[0]


def _phenomena(readme: Path) -> dict[str, str]:
    """check id → phenomenon, from the set's README table (``| change | 27 | 01-a1 … | …``); empty without one."""
    out: dict[str, str] = {}
    if not readme.exists():
        return out
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and re.fullmatch(r"\d+", cells[1]) and re.match(r"\d\d-[a-z]\d", cells[2]):
            for cid in cells[2].split():
                out[cid] = cells[0]
    return out


def _rate(outcomes: list[Outcome]) -> dict[str, Any]:
    passed = sum(o.passed for o in outcomes)
    return {"passed": passed, "checks": len(outcomes), "rate": round(passed / len(outcomes), 4) if outcomes else 0.0}


def summarise(results: list[PersonaResult], phenomena: dict[str, str]) -> dict[str, Any]:
    """Rates overall, per kind, per persona, per phenomenon and per odd/even half of the personas."""
    every = [o for r in results for o in r.outcomes]
    by_kind = {k: _rate([o for o in every if o.kind == k]) for k in KINDS}
    by_phenomenon: dict[str, list[Outcome]] = defaultdict(list)
    for o in every:
        by_phenomenon[phenomena.get(o.id, "unlisted")].append(o)
    halves: dict[str, Any] = {}
    for name, parity in (("odd", 1), ("even", 0)):
        part = [o for r in results if r.number.isdigit() and int(r.number) % 2 == parity for o in r.outcomes]
        if part:
            halves[name] = {
                "overall": _rate(part),
                "by_kind": {k: _rate([o for o in part if o.kind == k]) for k in KINDS},
            }
    return {
        "overall": _rate(every),
        "by_kind": by_kind,
        "by_phenomenon": {k: _rate(v) for k, v in sorted(by_phenomenon.items())} if phenomena else {},
        "halves": halves,
        "personas": [
            {
                "persona": r.persona,
                "number": r.number,
                **_rate(r.outcomes),
                "facts": r.facts,
                "parked_jobs": r.parked_jobs,
                "seconds": r.seconds,
                "error": r.error,
                "checks": [{"id": o.id, "kind": o.kind, "passed": o.passed, "seen": o.seen} for o in r.outcomes],
            }
            for r in results
        ],
    }


def _fmt(rate: float, checks: int, digits: int = 3) -> str:
    return "n/a" if checks == 0 else f"{rate:.{digits}f}"


def _print(report: dict[str, Any], results: list[PersonaResult], *, failures: bool) -> None:
    overall = report["overall"]
    print(f"\ntruth: {overall['passed']}/{overall['checks']} = {overall['rate']:.3f}  ({report['extractor']})")
    print(
        "by kind:   "
        + "  ".join(
            f"{k} {_fmt(v['rate'], v['checks'])} ({v['passed']}/{v['checks']})" for k, v in report["by_kind"].items()
        )
    )
    for name, half in report["halves"].items():
        kinds = "  ".join(f"{k} {_fmt(v['rate'], v['checks'], 2)}" for k, v in half["by_kind"].items())
        print(f"{name:5} half: {half['overall']['rate']:.3f}  {kinds}")
    if report["by_phenomenon"]:
        print(
            "by phenomenon: "
            + "  ".join(
                f"{k} {v['rate']:.2f} ({v['passed']}/{v['checks']})" for k, v in report["by_phenomenon"].items()
            )
        )
    parked = sum(r.parked_jobs for r in results)
    if parked:
        print(f"parked jobs: {parked}")
    if failures:
        print("\nfailed checks:")
        for r in results:
            for o in r.outcomes:
                if not o.passed:
                    print(f"  {o.id:7} {o.kind:8} {o.seen[:220]}")


if __name__ == "__main__":
    raise SystemExit(main())
