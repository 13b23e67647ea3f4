"""Regression error families: RMSE/RMSLE, MAE and grouped log-MAE, angular and haversine errors, MCRMSE.

Importing the package registers its graders."""

from grading.engine.graders.regression import error, geo, mae, mcrmse  # noqa: F401  (registrations)
