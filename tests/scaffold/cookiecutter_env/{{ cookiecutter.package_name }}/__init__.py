"""{{ cookiecutter.project_name }}: an OpenEnv environment (cookiecutter template, envkit's tests)."""

__all__ = ["{{ cookiecutter.class_prefix }}Action", "{{ cookiecutter.class_prefix }}Observation", "{{ cookiecutter.class_prefix }}Env"]

# Only as an installed package (`import {{ cookiecutter.package_name }}`): pytest and uvicorn also load this
# directory as plain files, where relative imports have no parent package.
if __package__:
    from .client import {{ cookiecutter.class_prefix }}Env
    from .models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
