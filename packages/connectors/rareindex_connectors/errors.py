"""The SDK's error tree, whole: what a connector, an engine or the router raises.

The tree is drawn in :mod:`rareindex_connectors._errors`. A connector raises
:class:`ParseError` with a reason from :class:`ParseReason` for input it cannot read; the fetch
errors are raised to it by ``ctx.fetch``. :func:`json_failure` says why a JSON body did not parse,
in the same closed vocabulary.

Example:
    >>> from rareindex_connectors.errors import ConnectorError, ParseError, ParseReason
    >>> issubclass(ParseError, ConnectorError)
    True
    >>> ParseError(ParseReason.MISSING_FIELD, "no price", field="price").reason.value
    'missing_field'
"""

from ._errors import (
    Blocked,
    BudgetExhausted,
    CircuitOpen,
    ConnectorError,
    DNSError,
    FetchError,
    ParseError,
    ParseReason,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    ResponseTooLarge,
    RobotsDisallowed,
    RobotsUnavailable,
    TLSError,
    TransientFetchError,
    TruncatedBody,
    UndecodableBody,
    UnsafeURL,
)
from ._json_failure import MAX_DEPTH, json_failure, nesting_depth

__all__ = [
    "MAX_DEPTH",
    "Blocked",
    "BudgetExhausted",
    "CircuitOpen",
    "ConnectorError",
    "DNSError",
    "FetchError",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "PolicyError",
    "RateLimited",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "TLSError",
    "TransientFetchError",
    "TruncatedBody",
    "UndecodableBody",
    "UnsafeURL",
    "json_failure",
    "nesting_depth",
]
