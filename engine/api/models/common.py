"""Base classes shared by every request and response model of the endpoint.

Requests forbid unknown fields: a client that misspells ``conversation_id`` gets a 400 naming the
field instead of an event filed under no conversation.  Responses are read from the engine's
frozen dataclasses (``from_attributes``).  Datetimes are timezone-aware UTC in the engine and
pydantic writes them as ISO-8601 with a ``Z`` suffix.
"""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field

#: A user id as the engine uses it (``default`` for a single-person vault).
UserId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        description="Whose memory: Cairn keeps users apart and never mixes their data.",
        examples=["default"],
    ),
]

#: One past the largest integer SQLite stores: an INTEGER is a signed 64-bit number, and the driver
#: raises ``OverflowError`` on anything larger (a bug's 500 instead of the client's 400).  Bounds are
#: stated as "less than" this: FastAPI writes schema bounds as floats, and 2**63 is one a float holds
#: exactly (2**63 - 1 would be documented as 2**63).
SQL_INTEGER_LIMIT = 2**63
MAX_SQL_INTEGER = SQL_INTEGER_LIMIT - 1

#: A global id (a fact, a document, a collection, a job, …) as every route, request body and MCP
#: tool takes it.  Ids start at 1, and an id sent to the database must fit an SQLite INTEGER, so the
#: bounds are checked here, once, where the request is validated: an id out of range is answered
#: 400 naming the field, like any other invalid value, and never reaches a query.
Id = Annotated[int, Field(ge=1, lt=SQL_INTEGER_LIMIT)]

#: The datetime formats a request may use (documented once, referenced by every time field).
TIME_FORMATS = "ISO-8601 (a time without a zone is UTC) or Unix epoch seconds"


class RequestModel(BaseModel):
    """A request body: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ResponseModel(BaseModel):
    """A response body, built from an engine DTO."""

    model_config = ConfigDict(from_attributes=True, frozen=True)

    @classmethod
    def of(cls, dto: Any) -> Self:
        """The model of one engine DTO (a frozen dataclass with the same field names)."""
        return cls.model_validate(dto, from_attributes=True)


class Page(ResponseModel):
    """Paging information shared by cursor-paged lists."""

    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page.",
        examples=["MTc3MjM1ODIwMC4wOjQy"],
    )


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str = Field(
        description="Stable machine-readable code: validation_error, unauthorized, not_found, "
        "conflict, payload_too_large, unsupported_media_type, too_many_requests, …",
        examples=["validation_error"],
    )
    message: str = Field(
        description="What happened, for people.",
        examples=["events[2].content: must be non-empty text"],
    )
    details: dict[str, Any] = Field(
        description="Specifics: `field` and `errors` for validation, `fix` (what to do), …",
        examples=[{"field": "events[2].content", "fix": "Correct the named field."}],
    )


class ErrorBody(BaseModel):
    """Every error the endpoint answers, whatever its status."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": {
                        "code": "not_found",
                        "message": "No fact with id 99.",
                        "details": {"kind": "fact", "id": 99, "fix": ""},
                    }
                }
            ]
        }
    )

    error: ErrorDetail = Field(description="The error.")
