"""Config-only store connectors: a Shopify or WooCommerce store from one small file.

``connectors/shopify/<slug>.toml`` becomes a :class:`ShopifyStoreConnector` and
``connectors/woocommerce/<slug>.toml`` a :class:`WooCommerceStoreConnector`; the registry finds
them by folder (:data:`CONFIG_KINDS`).
"""

from .config import StoreConfig
from .shopify import ShopifyStoreConnector
from .woocommerce import WooCommerceStoreConnector

CONFIG_KINDS = {"shopify": ShopifyStoreConnector, "woocommerce": WooCommerceStoreConnector}
"""Folder name under ``connectors/`` -> the connector class a config file there becomes."""

__all__ = ["CONFIG_KINDS", "ShopifyStoreConnector", "StoreConfig", "WooCommerceStoreConnector"]
