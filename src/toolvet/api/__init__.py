"""The REST API: FastAPI routers over the services, one error table, bearer-token authentication."""

from toolvet.api.app import create_app

__all__ = ["create_app"]
