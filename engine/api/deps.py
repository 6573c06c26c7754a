"""Dependencies shared by the routers: how a route reaches the Vault it serves.

Routes never open storage themselves; they declare ``vault: VaultDep`` and call the facade.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from engine.vault import Vault


async def get_vault(request: Request) -> Vault:
    """The vault this app was created for (set by :func:`engine.api.app.create_app`).

    Declared ``async`` because it only reads an attribute: FastAPI runs a plain ``def`` dependency on a worker
    thread, and that hand-off (and back) cost every request more than the lookup itself.
    """
    vault: Vault = request.app.state.vault
    return vault


VaultDep = Annotated[Vault, Depends(get_vault)]
