"""Thin dramatiq shells around the pipeline stages of :mod:`rareindex`.

An actor decodes a message (ids, never payloads), calls one pipeline function and returns; all
logic lives below and is testable without a broker. :func:`workers.broker.configure_broker` picks
the broker from the settings: dramatiq's in-process stub broker when embedded, Redis or RabbitMQ
in a fleet.
"""
