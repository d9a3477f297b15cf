"""The SDK's version, sent in the honest bot user agent."""

__version__ = "0.1.0"
