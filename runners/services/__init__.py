"""Hosted runs' writes: requests and cancels (hosted.py), what workers report (workers.py), and the
assembly of a finished run into a submission (assembly.py)."""
