"""The views of the main window, in navigation order.

Adding a view is one line in :data:`VIEWS`.  The order is DESIGN §9's — Memories, Conflicts,
People & topics, Conversations, Documents, Ask, Activity, Settings — after the Overview that opens
the app; Ctrl+1 … Ctrl+9 follow it.
"""

from __future__ import annotations

from ui.context import ViewSpec
from ui.views.activity import ActivityView
from ui.views.ask import AskView
from ui.views.conflicts import ConflictsView
from ui.views.conversations import ConversationsView
from ui.views.documents import DocumentsView
from ui.views.memories import MemoriesView
from ui.views.overview import OverviewView
from ui.views.settings import SettingsView
from ui.views.subjects import SubjectsView

VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec(
        "overview",
        "Overview",
        "overview",
        OverviewView,
        "The vault at a glance and its health checks",
    ),
    ViewSpec("memories", "Memories", "memories", MemoriesView, "Browse, search and correct facts"),
    ViewSpec(
        "conflicts",
        "Conflicts",
        "conflicts",
        ConflictsView,
        "Memories that contradict each other",
    ),
    ViewSpec(
        "subjects",
        "People & topics",
        "subjects",
        SubjectsView,
        "Who and what the memories are about",
    ),
    ViewSpec(
        "conversations",
        "Conversations",
        "conversations",
        ConversationsView,
        "Chats, episodes and transcript import",
    ),
    ViewSpec(
        "documents",
        "Documents",
        "documents",
        DocumentsView,
        "Files, collections, quarantine and watched folders; drop files anywhere to add them",
    ),
    ViewSpec("ask", "Ask", "ask", AskView, "Try a recall and see what a chat client receives"),
    ViewSpec("activity", "Activity", "activity", ActivityView, "Background work and failures"),
    ViewSpec("settings", "Settings", "settings", SettingsView, "Models, privacy, endpoint, more"),
)
