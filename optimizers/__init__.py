"""Datasets, metrics, evaluation, compilation and MLflow tracking."""
