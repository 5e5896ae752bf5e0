"""The served-toolvet fixture of the gateway tests, for running the conformance suite through toolvet."""

from tests.gateway.conftest import toolvet

__all__ = ["toolvet"]
