"""The admin API's routers, one module per concern."""
