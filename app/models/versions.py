"""A change counter per table, bumped in the same transaction as every write to that table."""
from __future__ import annotations

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db


class DataVersion(db.Model):
    __tablename__ = "data_versions"

    table_name: Mapped[str] = mapped_column(String(80), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
