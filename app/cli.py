"""The ``cairn`` command.  No arguments opens the desktop app; sub-commands run headless.

Every sub-command calls the same :class:`engine.Vault` methods as the GUI and the endpoint.  User-caused errors are
printed as one readable message with its fix and exit status 1; they never show a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from engine import paths
from engine.errors import UserError, VaultError
from engine.version import __version__

if TYPE_CHECKING:
    from rich.progress import TaskID

    from engine import Vault
    from engine.conversations import ImportProgress

app = typer.Typer(
    name="cairn",
    help="Cairn — a local-first memory vault. Without a command, opens the desktop app.",
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=False)
err = Console(stderr=True)

VaultOption = Annotated[
    Path | None,
    typer.Option(
        "--vault",
        help="Vault folder (default: $CAIRN_HOME/vault or the platform's data folder).",
        envvar="CAIRN_VAULT",
        show_default=False,
    ),
]


class _State:
    vault: Path | None = None


state = _State()


def _version(value: bool) -> None:
    if value:
        console.print(f"cairn {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    vault: VaultOption = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Open the desktop app when no command is given."""
    state.vault = vault
    if ctx.invoked_subcommand is None:
        from app.gui import run_gui

        raise typer.Exit(run_gui(vault))


@app.command()
def serve(
    vault: VaultOption = None,
    port: Annotated[int | None, typer.Option("--port", help="TCP port on 127.0.0.1/::1.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log more to the console.")] = False,
) -> None:
    """Run the vault and its localhost endpoint without a window (Ctrl-C or SIGTERM stops it cleanly)."""
    from app.runtime import make_endpoint, open_vault

    with _ErrorReporter():
        opened = open_vault(vault or state.vault, verbose=verbose, on_created=_told_created)
        try:
            server = make_endpoint(opened, port)
            err.print(
                f"Cairn {__version__} serving {opened.paths.root} at {server.address} "
                f"(token: `cairn token`; Ctrl-C to stop)"
            )
            server.run()
            err.print("Stopping: finishing queued work…")
        finally:
            opened.close()
        err.print("Stopped cleanly.")


@app.command("mcp")
def mcp_stdio(
    vault: VaultOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log more to stderr.")] = False,
) -> None:
    """Serve Cairn's MCP tools on stdin/stdout, for chat apps that start Cairn themselves.

    When the desktop app (or `cairn serve`) has the vault open, the same tools are served through its endpoint.
    """
    from app.runtime import open_vault
    from engine.errors import VaultLocked

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    # stdout carries the protocol and nothing else: logs go to stderr and the vault's logs/.
    with _ErrorReporter():
        try:
            opened = open_vault(root_dir, verbose=verbose, on_created=_told_created)
        except VaultLocked as exc:
            from app.mcp_bridge import bridge_stdio, running_endpoint

            endpoint = running_endpoint(root_dir)
            if endpoint is None:
                exc.fix = (
                    "Another Cairn process has the vault open and no endpoint of it answers for this vault: "
                    "enable its endpoint (Settings → endpoint), or quit it so that `cairn mcp` can open the vault."
                )
                raise
            err.print(f"Cairn is running with this vault: serving its tools through {endpoint.url}.")
            raise typer.Exit(bridge_stdio(endpoint)) from None
        # imported on use, after the vault opened: only this command pays for the MCP SDK, and a bad path is
        # refused before it does
        from engine.api.mcp import build_mcp_server

        try:
            build_mcp_server(opened).run("stdio")
        finally:
            opened.close()


@app.command()
def doctor(vault: VaultOption = None) -> None:
    """Check SQLite, sqlite-vec, the vault, Ollama, the embedder and the endpoint; say how to fix problems.

    Never creates anything: a path with no vault is reported (a file, a folder of other files or a read-only folder
    as an error, a missing one as a warning: Cairn would create it there).
    """
    from engine.doctor import run_doctor

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    report = run_doctor(root_dir)
    table = Table(show_header=True, header_style="bold")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail")
    table.add_column("fix")
    colours = {"ok": "green", "warn": "yellow", "error": "red"}
    for finding in report.findings:
        table.add_row(finding.check, f"[{colours[finding.status]}]{finding.status}[/]", finding.detail, finding.fix)
    console.print(table)
    if not report.ok:
        err.print("[red]Something essential is missing; see the fixes above.[/]")
        raise typer.Exit(1)


@app.command()
def token(
    vault: VaultOption = None,
    rotate: Annotated[bool, typer.Option("--rotate", help="Replace the token; old clients get 401.")] = False,
) -> None:
    """Print the endpoint's bearer token of an existing vault (--rotate replaces it).

    Refuses a path with no vault rather than making one: a token of a vault nobody serves gets 401 everywhere.
    """
    from engine.doctor import READ_ONLY_FIX, inspect_vault_dir, vault_dir_problem
    from engine.token import read_or_create_token, rotate_token

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    with _ErrorReporter():
        found = inspect_vault_dir(root_dir)
        problem = vault_dir_problem(found, create=False, write=rotate)
        if problem is not None:
            if found.state in ("missing", "new"):
                problem.fix += _serving_elsewhere(root_dir)
            raise problem
        token_path = paths.VaultPaths(root_dir).token
        if not rotate and not found.writable and not token_path.exists():
            raise UserError(f"{root_dir} is read-only and its vault has no token yet.", fix=READ_ONLY_FIX)
        value = rotate_token(token_path) if rotate else read_or_create_token(token_path)
    if rotate:
        err.print("New token written; restart connected clients with it. A running Cairn picks it up at once.")
    console.print(value, soft_wrap=True, highlight=False)


def _serving_elsewhere(root_dir: Path) -> str:
    """A hint when a Cairn is serving on the port this vault would use: its vault is the one the person means."""
    from engine.config import Settings
    from engine.doctor import probe_port

    try:
        port = Settings.load(paths.VaultPaths(root_dir).settings).endpoint.port
    except VaultError:
        return ""
    if not probe_port(port).cairn:
        return ""
    return (
        f" A Cairn is serving another vault on port {port} right now: pass that vault's folder with --vault "
        "(the desktop app's Overview shows its path)."
    )


def _told_created(root: Path) -> None:
    """Say that a new vault was made: a mistyped --vault must not go unnoticed."""
    from rich.markup import escape

    err.print(
        f"[yellow]note:[/] there was no vault at {escape(str(root))}, so a new, empty one was created there. "
        "If you meant an existing vault, stop and pass its folder with --vault (`cairn paths` prints the default).",
        highlight=False,
    )


@app.command("ingest")
def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to add to the vault.")],
    vault: VaultOption = None,
    collection: Annotated[
        str | None, typer.Option("--collection", help="Add them to this collection (created when missing).")
    ] = None,
    project: Annotated[str | None, typer.Option("--project", help="Project id to file them under.")] = None,
) -> None:
    """Add documents (Markdown, PDF, text, HTML) with a progress bar and an ok / degraded / quarantined summary.

    Exits 1 when a file failed, or a path given or a folder inside one could not be read (each is named, after
    everything readable has been added).
    """
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from app.runtime import open_vault

    with _ErrorReporter():
        opened = open_vault(vault or state.vault, start_workers=True, on_created=_told_created)
        try:
            unreadable = _unreadable(paths)
            collection_id = _collection_id(opened, collection) if collection else None
            last = None
            with Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("reading…", total=None)
                for last in opened.watcher.ingest_paths(paths, collection_id=collection_id, project_id=project):
                    bar.update(
                        task,
                        total=last.total,
                        completed=last.done,
                        description=escape(Path(last.current).name[:40]) or "reading…",
                    )
            for problem in unreadable:
                err.print(f"[red]not read:[/] {escape(problem)}", highlight=False)
            if unreadable:
                err.print(
                    "[yellow]fix:[/] check the path, or give yourself read access (chmod -R u+rX FOLDER), then run "
                    "the command again: files already added are skipped as unchanged.",
                    highlight=False,
                )
            if last is None or last.total == 0:
                err.print("No supported files found (Markdown, PDF, text, HTML).")
                raise typer.Exit(1)
            console.print(
                f"{last.total} files: [green]{last.ok} ok[/], {last.unchanged} unchanged, "
                f"[yellow]{last.degraded} degraded[/], [red]{last.quarantined} quarantined[/], "
                f"{last.skipped} skipped, {last.failed} failed",
                highlight=False,
            )
            for problem in last.problems:
                console.print(f"  - {escape(problem)}", highlight=False)
            err.print("Spans are searchable now; summaries are being made in the background.")
            opened.jobs.wait_idle(timeout=600)
        finally:
            opened.close()
        if last.failed or unreadable:
            raise typer.Exit(1)


def _unreadable(given: list[Path]) -> list[str]:
    """The paths given that do not exist, and the folders under them that cannot be listed (their files cannot be
    found, so they would be missing from the run without a word); the default excluded folders are not entered."""
    import fnmatch

    from engine.documents.ingest import DEFAULTS

    problems: list[str] = []

    def note(exc: OSError) -> None:
        problems.append(f"{exc.filename}: {exc.strerror or exc}")

    for raw in given:
        path = Path(raw).expanduser()
        if not path.exists():
            problems.append(f"{path}: no such file or folder")
            continue
        if not path.is_dir():
            continue  # a file that cannot be read is reported by the run, with the others' outcomes
        for _folder, dirs, _files in os.walk(path, onerror=note, followlinks=False):
            dirs[:] = [d for d in dirs if not any(fnmatch.fnmatch(d, pat) for pat in DEFAULTS.exclude)]
    return problems


@app.command("import")
def import_command(
    files: Annotated[
        list[Path], typer.Argument(help="Transcript files: ChatGPT or Claude export, JSONL, text chat log, LoCoMo.")
    ],
    vault: VaultOption = None,
    user: Annotated[str, typer.Option("--user", help="User the conversations belong to.")] = "default",
    project: Annotated[str | None, typer.Option("--project", help="Project id to file them under.")] = None,
) -> None:
    """Import chat transcripts (each conversation with its original times and speakers; re-importing adds nothing).

    Prints each file's summary on stdout and progress on stderr; exits 1 when a file, or a conversation in it,
    could not be imported (the message names the file and the line or record), after importing everything else.
    """
    from rich.markup import escape

    from app.runtime import open_vault

    with _ErrorReporter():
        opened = open_vault(vault or state.vault, start_workers=True, on_created=_told_created)
        failed = False
        conversations = added = duplicates = rejected = 0
        try:
            for path in files:
                try:
                    last = _import_file(opened, path, user, project)
                except (VaultError, OSError) as exc:
                    message = exc.message if isinstance(exc, VaultError) else (exc.strerror or str(exc))
                    err.print(f"[red]error:[/] {escape(path.name)}: {escape(message)}", highlight=False)
                    if isinstance(exc, VaultError) and exc.fix:
                        err.print(f"[yellow]fix:[/] {escape(exc.fix)}", highlight=False)
                    failed = True
                    rejected += 1
                    continue
                console.print(
                    f"{path.name} ({last.importer}): {last.conversations_done} conversations, "
                    f"{last.events_added} turns added, {last.duplicates} already there",
                    highlight=False,
                    markup=False,
                )
                for problem in last.errors:
                    console.print(f"  [red]not imported:[/] {escape(problem)}", highlight=False)
                conversations += last.conversations_done
                added += last.events_added
                duplicates += last.duplicates
                rejected += len(last.errors)
                failed = failed or bool(last.errors)
            if len(files) > 1:
                console.print(
                    f"{len(files)} files: {conversations} conversations, {added} turns added, "
                    f"{duplicates} already there, {rejected} not imported",
                    highlight=False,
                )
            if added:
                err.print("Turns are in; facts are being extracted in the background…")
                opened.jobs.wait_idle(timeout=3600)
        finally:
            opened.close()
        if failed:
            raise typer.Exit(1)


def _import_file(opened: Vault, path: Path, user: str, project: str | None) -> ImportProgress:
    """Import one transcript file, showing progress on stderr; returns the last ``ImportProgress``.

    A terminal gets a progress bar; a pipe or a log gets one line per conversation, so progress stays visible
    where a bar cannot redraw.
    """
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    steps = opened.conversations.import_file(path, user_id=user, project_id=project)
    last: ImportProgress | None = None
    if not err.is_terminal:
        for last in steps:
            if last.conversations_done:
                current = f" — {last.current}" if last.current else ""
                err.print(
                    f"{path.name}: {last.conversations_done}/{last.conversations_total} conversations{current}",
                    highlight=False,
                    markup=False,
                )
    else:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
        ) as bar:
            task = bar.add_task(escape(path.name), total=None)
            for last in steps:
                bar.update(
                    task,
                    total=last.conversations_total,
                    completed=last.conversations_done,
                    description=escape(f"{path.name}: {last.current[:40]}" if last.current else path.name),
                )
    assert last is not None, "import_file yields at least once"
    return last


def _collection_id(opened: object, name: str) -> int:
    for collection in opened.collections():  # type: ignore[attr-defined]
        if collection.name.casefold() == name.casefold():
            return int(collection.id)
    return int(opened.collections.create(name).id)  # type: ignore[attr-defined]


@app.command("export")
def export_command(
    file: Annotated[Path, typer.Argument(help="The archive to write (a .zip file).")],
    vault: VaultOption = None,
) -> None:
    """Write the whole vault to one archive in an open format (docs/export-format.md); `cairn restore` reads it.

    Works while the desktop app has the vault open: the export reads one consistent snapshot beside it.  The
    archive holds your memories, so it is written readable by you alone; the endpoint token and API keys stay out.
    """
    from rich.markup import escape

    from engine.archive import export_folder
    from engine.doctor import inspect_vault_dir, vault_dir_problem

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    with _ErrorReporter():
        problem = vault_dir_problem(inspect_vault_dir(root_dir), create=False, write=False)
        if problem is not None:
            raise problem
        with _StageBar() as bar:
            report = export_folder(root_dir, file, progress=bar.update)
    counts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in report.counts.items() if n)
    console.print(f"Exported to {escape(report.path)} ({_size(report.size_bytes)}): {counts or 'an empty vault'}.")
    console.print(f"Original files included: {report.originals} of {report.originals + report.originals_missing}.")
    for note in report.notes:
        err.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


@app.command("restore")
def restore_command(
    source: Annotated[Path, typer.Argument(help="An archive from `cairn export`, or a backup from `cairn backups`.")],
    vault: Annotated[
        Path | None,
        typer.Option("--vault", help="The new vault folder to restore into (missing or empty; never overwritten)."),
    ] = None,
) -> None:
    """Rebuild a vault from an export or a backup, in a new folder; vectors and indexes are made again."""
    from rich.markup import escape

    from app.plugins import build_plugin_manager
    from engine.restore import restore_vault

    if vault is None:
        err.print("[red]error:[/] say where the restored vault goes: --vault NEW_FOLDER", highlight=False)
        err.print("[yellow]fix:[/] a restore never overwrites a vault; name a new (or empty) folder.")
        raise typer.Exit(1)
    with _ErrorReporter(), _StageBar() as bar:
        report = restore_vault(source, vault, progress=bar.update, plugins=build_plugin_manager())
    counts = report.counts
    console.print(
        f"Restored {report.source_kind} into {escape(report.vault)}: {counts['events']} events, "
        f"{counts['facts']} memories, {counts['documents']} documents, {counts['collections']} collections.",
        highlight=False,
    )
    if report.originals:
        console.print(f"Original files: {report.originals}, in {escape(report.vault)}/originals.", highlight=False)
    for note in report.notes:
        err.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    console.print(f"Open it with: cairn --vault {escape(report.vault)}", highlight=False)


@app.command("backups")
def backups_command(vault: VaultOption = None) -> None:
    """List the vault's backups, newest first, and how to restore one."""
    from rich.markup import escape

    from engine.backups import list_backups
    from engine.doctor import inspect_vault_dir, vault_dir_problem

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    with _ErrorReporter():
        problem = vault_dir_problem(inspect_vault_dir(root_dir), create=False, write=False)
        if problem is not None:
            raise problem
    found = list_backups(paths.VaultPaths(root_dir).backups)
    if not found:
        console.print("No backups yet. The app makes one a day (Settings → backups); forgetting makes a fresh one.")
        return
    table = Table(show_header=True, header_style="bold")
    for column in ("made", "size", "file"):
        table.add_column(column)
    for b in found:
        table.add_row(b.created_at.astimezone().strftime("%Y-%m-%d %H:%M"), _size(b.size_bytes), escape(b.path))
    console.print(table)
    console.print("Restore one with: cairn restore FILE --vault NEW_FOLDER", highlight=False)


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


_STAGE_LABELS = {
    "export": "writing records",
    "originals": "adding original files",
    "restore": "restoring records",
    "vectors": "making vectors",
}


class _StageBar:
    """A transient progress bar on stderr fed ``(stage, done, total)`` by export and restore."""

    def __enter__(self) -> _StageBar:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err, transient=True
        )
        self._bar.__enter__()
        self._tasks: dict[str, TaskID] = {}
        return self

    def update(self, stage: str, done: int, total: int) -> None:
        """Show one stage's progress (a new stage gets its own line)."""
        task = self._tasks.get(stage)
        if task is None:
            task = self._tasks[stage] = self._bar.add_task(_STAGE_LABELS.get(stage, stage), total=max(total, 1))
        self._bar.update(task, completed=done, total=max(total, 1))

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(None, None, None)


@app.command("paths")
def show_paths(
    vault: VaultOption = None,
    models: Annotated[bool, typer.Option("--models", help="Print only the models folder.")] = False,
) -> None:
    """Print where the vault, its files and the models folder are."""
    if models:
        console.print(str(paths.models_dir()), highlight=False)
        return
    from rich.markup import escape

    from engine.doctor import inspect_vault_dir, vault_dir_problem

    root_dir = paths.resolve_vault_dir(vault or state.vault)
    problem = vault_dir_problem(inspect_vault_dir(root_dir), create=False, write=False)
    if problem is not None:  # still printed: where a new vault would go is what some ask this for
        err.print(f"[yellow]note:[/] {escape(problem.message)}", highlight=False)
    vp = paths.VaultPaths(root_dir)
    for label, value in (
        ("vault", vp.root),
        ("database", vp.db),
        ("settings", vp.settings),
        ("token", vp.token),
        ("logs", vp.logs),
        ("backups", vp.backups),
        ("models", paths.models_dir()),
    ):
        console.print(f"{label:9} {value}", highlight=False)


class _ErrorReporter:
    """Print VaultErrors as a message and a fix, exit 1; let bugs raise."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, _tb: object) -> None:
        if isinstance(exc, VaultError):
            from rich.markup import escape  # messages name paths, which may hold [brackets]

            err.print(f"[red]error:[/] {escape(exc.message)}", highlight=False)
            if exc.fix:
                err.print(f"[yellow]fix:[/] {escape(exc.fix)}", highlight=False)
            raise typer.Exit(1)
        if isinstance(exc, KeyboardInterrupt):
            raise typer.Exit(130)


def main() -> None:
    """Console-script entry point."""
    if os.environ.get("CAIRN_HOME") == "":
        os.environ.pop("CAIRN_HOME")
    app()
