"""Dagster definitions, one folder per stage; each folder is also the asset group of its assets."""
