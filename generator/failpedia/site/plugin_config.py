"""The options of the ``failpedia`` plugin in ``mkdocs.yml``; defaults from ``settings``."""

from __future__ import annotations

from mkdocs.config import config_options
from mkdocs.config.base import Config

from failpedia.settings import (
    DEFAULT_ENTRIES_DIR,
    DEFAULT_HEALTHY_LOGS_DIR,
    DEFAULT_REALWORLD_CASES_DIR,
    DEFAULT_RECORDS_DIR,
    DEFAULT_TEMPLATES_DIR,
)


class FailpediaConfig(Config):  # type: ignore[no-untyped-call]  # mkdocs is untyped here
    entries_dir = config_options.Type(str, default=DEFAULT_ENTRIES_DIR)
    templates_dir = config_options.Type(str, default=DEFAULT_TEMPLATES_DIR)
    records_dir = config_options.Type(str, default=DEFAULT_RECORDS_DIR)
    realworld_cases_dir = config_options.Type(str, default=DEFAULT_REALWORLD_CASES_DIR)
    healthy_logs_dir = config_options.Type(str, default=DEFAULT_HEALTHY_LOGS_DIR)
    edit_base = config_options.Optional(config_options.Type(str))
    nav_section = config_options.Optional(config_options.Type(str))
