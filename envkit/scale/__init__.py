"""Serving one environment from several replicas behind one URL.

- :mod:`envkit.scale.capacity`: how many replicas a number of concurrent sessions needs.
- :mod:`envkit.scale.k8s`: Kubernetes manifests for a pool (``envkit deploy k8s``).
- :mod:`envkit.scale.ray_deploy`: a Ray Serve deployment (``envkit deploy ray``), played
  through :mod:`envkit.scale.ray_driver` in the interpreter that has Ray.
"""
