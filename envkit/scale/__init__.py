"""Serving one environment from several replicas behind one URL.

- :mod:`envkit.scale.capacity`: how many replicas a number of concurrent sessions needs.
"""
